-- Issuance without a row lock on the epoch under READ COMMITTED (issue 14, the lease's cost).
--
-- V12's issue_token() re-reads the epoch row FOR SHARE after taking the issuance lock, so that an
-- advance committed while it waited is seen (40001) rather than a token issued in the old epoch.
-- The row lock wrote a WAL record per acquisition, and a multixact whenever two acquisitions of
-- different resources overlapped. Under READ COMMITTED it adds nothing: every writer of
-- cluster_epoch (advance_epoch, adoption) holds the issuance lock exclusively until it ends, so
-- once this transaction holds it shared no epoch change can commit before this one ends, and the
-- re-read is a later statement than the lock (hazard 7: a fresh snapshot, taken after the lock
-- was granted, sees every change committed before). REPEATABLE READ and SERIALIZABLE keep FOR
-- SHARE: their snapshot predates the lock, and the row lock is what raises 40001 for a row
-- changed after it. Everything else is V12's issue_token. (EpochTest races advance_epoch and
-- adoption against issuance under all three levels.)
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.issue_token(p_floor bigint)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch := ${flyway:defaultSchema}.own_epoch();
    v_epoch bigint;
    v_base bigint;
    v_need bigint;
    v_last bigint;
    v_token bigint;
    v_exclusive boolean := false;
    v_offset bigint;
BEGIN
    IF e.system_identifier IS NULL THEN
        -- restored, cloned or upgraded into a cluster or database this fence has not seen
        PERFORM ${flyway:defaultSchema}.lock_issuance(true);
        v_exclusive := true;
        e := ${flyway:defaultSchema}.own_epoch();
        IF e.system_identifier IS NULL THEN
            PERFORM ${flyway:defaultSchema}.record_epoch(${flyway:defaultSchema}.adoption_epoch(), 'adopted');
            e := ${flyway:defaultSchema}.own_epoch();
        END IF;
    END IF;
    v_epoch := ${flyway:defaultSchema}.epoch_of(e);
    v_base := v_epoch << 43;
    v_need := greatest(coalesce(p_floor, 0), v_base);

    v_last := (SELECT last_value FROM ${flyway:defaultSchema}.token_seq);
    -- 2^43 - 1 is the epoch's last counter value: refuse before moving the sequence past it
    IF greatest(v_need, v_last) >= v_base + 8796093022207 THEN
        PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, greatest(v_need, v_last) + 1, p_floor);
    END IF;
    IF NOT v_exclusive THEN
        v_exclusive := v_last < v_need;
        PERFORM ${flyway:defaultSchema}.lock_issuance(v_exclusive);
        -- An advance that committed while this waited for the lock has moved the epoch: this
        -- transaction read the old one. READ COMMITTED: a plain read, in a later statement than
        -- the lock (see above). Otherwise FOR SHARE: a row changed after the snapshot raises 40001.
        IF current_setting('transaction_isolation') = 'read committed' THEN
            v_offset := (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
                          WHERE (c.system_identifier, c.database_oid, c.resource_table)
                              = (e.system_identifier, e.database_oid, e.resource_table));
        ELSE
            v_offset := (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
                          WHERE (c.system_identifier, c.database_oid, c.resource_table)
                              = (e.system_identifier, e.database_oid, e.resource_table)
                            FOR SHARE);
        END IF;
        IF v_offset IS DISTINCT FROM e.epoch_offset THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'fencing: the token epoch was advanced while this issuance waited; retry the transaction';
        END IF;
    END IF;
    v_token := nextval('${flyway:defaultSchema}.token_seq');
    IF v_token <= v_need THEN
        PERFORM setval('${flyway:defaultSchema}.token_seq', v_need);
        v_token := nextval('${flyway:defaultSchema}.token_seq');
    END IF;
    IF v_token > v_base + 8796093022207 THEN
        PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, v_token, p_floor);
    END IF;
    RETURN v_token;
END
$$;
