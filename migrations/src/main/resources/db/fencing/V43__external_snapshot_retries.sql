-- External resources under a snapshot, and resets in one order. Every other behaviour is the one
-- in place (reset_external is V42's with its two writes swapped; fence_full is edited in place, as
-- V40 and V42 did).
--
-- 1. A check under REPEATABLE READ or SERIALIZABLE of an external resource (tokens issued by
--    ZooKeeper, etcd) whose snapshot predates a protect() or unprotect() of a table of that
--    resource. Both update the resource row (has_protected, V17) and issue nothing; the row
--    changed after the snapshot cannot be locked there, and the CURRENT holder (token = the
--    snapshot's max_seen) was refused as stale: ZF001 "a newer token was issued after this
--    transaction began", hint "do not retry", though no newer token existed. V35 closed this for
--    local resources through the lease row, which every issuance updates; an external resource has
--    no lease and its max_seen advances in checks. But protect and unprotect update the one row of
--    protection_change (V17) in the transaction that changes the resource row: the check of the
--    snapshot's current token now probes it (FOR SHARE NOWAIT, on its refusal path only), as V42
--    probes external_reset. Changed since the snapshot (40001) or locked now (55P03, a protect in
--    flight) means a protection changed after the snapshot, and the answer is 40001 "... was
--    changed after this transaction began, and protect or unprotect ran since ...; retry the
--    transaction": its retry decides on the row as it is (accepted, or ZF001 if a newer token was
--    checked too). Unchanged means the row changed otherwise: a newer token (ZF001 at once, as
--    before), or a reset (V42's probe, then). A token below the snapshot's max_seen is stale
--    whatever else changed and is untouched here. The row is one for all tables: a protect of
--    another resource's table sends such a check to its retry too (protecting is an operator's
--    step, rare). (ExternalProtectFlagIsolationTest.)
-- 2. Two reset_external calls on different resources deadlocked (40P01) since V42: each locked its
--    resource row, then updated external_reset, so an operator transaction resetting x then y and
--    an autocommit reset of y in between each held what the other waited for. reset_external now
--    updates external_reset BEFORE it locks the resource row: resets take the two locks in one
--    order, and the second waits for the first, as before V42 (ResetExternalDeadlockTest). What
--    follows: a reset holds external_reset while it waits for the transactions fenced by its
--    resource's current token, so a second reset (of any external resource) waits for the first
--    one's transaction to end (V42 already made it wait from the row lock on); and a check under a
--    snapshot that reaches V42's probe meanwhile finds the row locked and answers 40001 (retry),
--    not ZF001 at once: its retry decides, after the reset. Nothing else locks external_reset
--    waiting (the checks' probe is NOWAIT). Under REPEATABLE READ / SERIALIZABLE a reset whose
--    snapshot predates another reset's commit fails on external_reset instead of on the row: the
--    same 40001 of V42 (B133), nothing changed.

-- 2. ------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.reset_external(p_resource text, p_max_seen bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    r := ${flyway:defaultSchema}.find_resource(p_resource);
    IF r.issuer <> 'external' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource "%s" is issued by this database: its max_seen follows its leases and is never reset', r.name),
            jsonb_build_object('resource', r.name, 'issuer', r.issuer));
    END IF;
    IF p_max_seen IS NULL OR p_max_seen < 0 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('max_seen must be zero or positive, was %s', coalesce(p_max_seen::text, 'null')),
            jsonb_build_object('argument', 'max_seen', 'value', p_max_seen));
    END IF;
    BEGIN -- a subtransaction; the locks it takes stay with the transaction
        -- V42: tells the checks under a snapshot older than this reset (fence_full). V43: first,
        -- so that every reset takes external_reset's lock, then its resource row's (no deadlock)
        UPDATE ${flyway:defaultSchema}.external_reset SET resets = resets + 1;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE;
    EXCEPTION WHEN serialization_failure THEN
        -- (only under REPEATABLE READ / SERIALIZABLE: READ COMMITTED re-reads the changed row)
        RAISE EXCEPTION USING ERRCODE = '40001',
            MESSAGE = format('fencing: reset_external cannot reset resource "%s" under %s: a change committed after this transaction''s snapshot was taken (a newer token checked, or another reset); run reset_external under READ COMMITTED',
                             r.name, upper(current_setting('transaction_isolation'))),
            DETAIL = jsonb_build_object('resource', r.name, 'max_seen', p_max_seen,
                                        'isolation', current_setting('transaction_isolation'))::text,
            HINT = 'BEGIN ISOLATION LEVEL READ COMMITTED (or autocommit with default_transaction_isolation = ''read committed''): reset_external waits for the transactions fenced by the current token, then resets the row as they left it';
    END;
    UPDATE ${flyway:defaultSchema}.resource
       SET max_seen = p_max_seen, last_used = least(last_used, p_max_seen), updated_at = now()
     WHERE id = r.id;
    RETURN r.max_seen;
END
$$;

-- 1. (fence_full) edited in place.
DO $migration$
DECLARE
    v_edit text[];
    v_oid pg_catalog.oid;
    v_src text;
    v_def text;
    v_new text;
    v_count integer;
BEGIN
    FOREACH v_edit SLICE 1 IN ARRAY ARRAY[
        -- function, the text replaced, its replacement, how many times the text occurs
        ARRAY['${flyway:defaultSchema}.fence_full(text,bigint)',
              E'            -- V42: below the snapshot\'s max_seen, but a reset_external since may have lowered\n',
              E'            -- V43: the token the snapshot holds current of an external resource: protect and\n'
              '            -- unprotect change the row and issue nothing; they update protection_change (V17)\n'
              '            IF p_token = r.max_seen AND r.issuer = \'external\' THEN\n'
              '                BEGIN\n'
              '                    PERFORM FROM ${flyway:defaultSchema}.protection_change FOR SHARE NOWAIT;\n'
              '                EXCEPTION WHEN serialization_failure OR lock_not_available THEN\n'
              '                    RAISE EXCEPTION USING ERRCODE = \'40001\',\n'
              '                        MESSAGE = format(\'fencing: resource "%s" was changed after this transaction began, and protect or unprotect ran since (they change the resource without a newer token); retry the transaction\',\n'
              '                                         r.name),\n'
              '                        DETAIL = jsonb_build_object(\'resource\', r.name, \'token\', p_token)::text,\n'
              '                        HINT = \'no newer token is known to this transaction; its retry decides on the resource as it is now\';\n'
              '                END;\n'
              '            END IF;\n'
              '            -- V42: below the snapshot\'s max_seen, but a reset_external since may have lowered\n',
              '1']
    ] LOOP
        v_oid := pg_catalog.to_regprocedure(v_edit[1]);
        v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
        v_def := pg_catalog.pg_get_functiondef(v_oid);
        IF strpos(v_src, v_edit[3]) > 0 THEN
            CONTINUE; -- applied before
        END IF;
        v_count := (length(v_src) - length(replace(v_src, v_edit[2], ''))) / length(v_edit[2]);
        IF v_count <> v_edit[4]::integer THEN
            RAISE EXCEPTION 'V43: the body of % holds "%" % times, not %', v_edit[1], v_edit[2], v_count, v_edit[4];
        END IF;
        IF (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
            RAISE EXCEPTION 'V43: the definition of % does not hold its body once', v_edit[1];
        END IF;
        v_new := replace(v_src, v_edit[2], v_edit[3]);
        -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
        EXECUTE replace(v_def, v_src, v_new);
    END LOOP;
END
$migration$;
