-- The check in a READ ONLY transaction: Connection.setReadOnly(true) (pgjdbc's BEGIN READ ONLY,
-- Spring's @Transactional(readOnly = true)), default_transaction_read_only, and every transaction
-- of a hot standby (a read replica). Such a transaction writes nothing the fence guards (it may
-- write only temporary tables), and it cannot become read-write once a statement has run, so
-- there is nothing to hold a newer holder off for; but the check's paths past the lease fast path
-- locked the resource row (SELECT ... FOR SHARE, or the UPDATE of a strict or external resource),
-- which PostgreSQL refuses there:
--
-- 1. fence() answered every check that did not take the fast path with 25006 "cannot execute
--    SELECT FOR SHARE in a read-only transaction": an external token (ZooKeeper, etcd) under any
--    isolation, a lease's token under REPEATABLE READ or SERIALIZABLE, a zombie's stale token, an
--    unknown resource. So a read the client checks (a function call it does not know to be
--    read-only, a WITH HOLD cursor's commit, V37) failed in a read-only transaction that succeeds
--    unfenced, and a zombie's write got an error naming a statement it never sent instead of the
--    fence's refusal. Now fence() judges a read-only transaction's token without a lock, before
--    its FOR SHARE read: the same validation and refusals as the full path (ZF001 stale or a
--    strict token used, ZF003 never issued, ZF004, ZF002/ZF006 for bad tokens, with their
--    receipts), and a current token is accepted with no advance and no marker. The fast path is
--    unchanged (its shared advisory lock is allowed in a read-only transaction and on a standby).
--    The body is derived from the one in place (its fast path carries the advisory key space
--    set_advisory_key_space chose, V34), the anchor found exactly once.
-- 2. mark_checked(), the marker a passed check of a protected resource leaves for its triggers,
--    takes the transaction id: on a standby that is 25006 "cannot execute pg_current_xact_id()
--    during recovery", so even the fast path failed there for a protected resource. A read-only
--    transaction writes no protected table (they are not temporary), so the marker is skipped
--    there: a trigger that found no marker would check by itself, never less.
-- (fencing-jdbc: ReadOnlyTransactionTest, HotStandbyTest.)

-- 1. ------------------------------------------------------------------------------------------
DO $migration$
DECLARE
    v_old constant text := E'    IF p_token > 0 AND pg_catalog.current_setting(''transaction_isolation'') = ''read committed'' THEN\n'
                           || E'        -- External resources (V6)';
    v_new constant text := E'    IF pg_catalog.current_setting(''transaction_read_only'') = ''on'' THEN\n'
                           || E'        -- V45: nothing to hold off, and no lock allowed: judged as the full path would\n'
                           || E'        PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);\n'
                           || E'        PERFORM ${flyway:defaultSchema}.refuse(r, p_token)\n'
                           || E'           FROM ${flyway:defaultSchema}.find_resource(p_resource) r\n'
                           || E'          WHERE r.max_seen <> p_token;\n'
                           || E'        RETURN false;\n'
                           || E'    END IF;\n'
                           || v_old;
    v_def text := pg_catalog.pg_get_functiondef(
        '${flyway:defaultSchema}.fence(text,bigint)'::pg_catalog.regprocedure);
BEGIN
    IF (length(v_def) - length(replace(v_def, v_old, ''))) / length(v_old) <> 1 THEN
        RAISE EXCEPTION 'V45: fence()''s body is not the one this migration derives its new body from';
    END IF;
    EXECUTE replace(v_def, v_old, v_new);
END
$migration$;

-- 2. ------------------------------------------------------------------------------------------
-- V18's body, returning first in a read-only transaction.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.mark_checked(p_resource_id bigint, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_checked text;
    v_secret text;
    v_entry text;
BEGIN
    IF pg_catalog.current_setting('transaction_read_only') = 'on' THEN
        RETURN; -- V45: no protected table can be written, and a standby assigns no transaction id
    END IF;
    v_checked := coalesce(pg_catalog.current_setting('fencing.checked', true), '');
    SELECT s.secret INTO v_secret FROM ${flyway:defaultSchema}.marker_secret s;
    v_entry := p_resource_id || ':' || p_token || ':'
               || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
                      v_secret || ':' || pg_catalog.pg_current_xact_id() || ':' || p_resource_id || ':' || p_token,
                      'UTF8')), 'hex'), 32);
    IF pg_catalog.strpos(',' || v_checked, ',' || v_entry || ',') = 0 THEN
        PERFORM pg_catalog.set_config('fencing.checked', v_checked || v_entry || ',', true);
    END IF;
END
$$;
