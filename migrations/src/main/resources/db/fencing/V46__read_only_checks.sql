-- A check in a READ ONLY transaction gets the fence's answer, not PostgreSQL's 25006.
--
-- Every path of the check but the fast one (READ COMMITTED, a local resource's current token)
-- takes a row lock: the external fast path's SELECT ... FOR SHARE (V6), and fence_full's UPDATE
-- (strict, an external token above max_seen) or FOR SHARE. PostgreSQL refuses both in a READ
-- ONLY transaction, before looking at a row: "cannot execute SELECT FOR SHARE in a read-only
-- transaction" (25006), for the current token (a false refusal of a legitimate read: a Spring
-- @Transactional(readOnly = true) under REPEATABLE READ calling a function fencing-jdbc cannot
-- prove read-only, SELECT my_report(), with a lease's token bound) as for a stale one (which
-- deserved ZF001). A READ ONLY transaction writes no table but its temporary ones (nextval, setval,
-- CREATE, permanent tables: refused by PostgreSQL), so there is no write for the lock to hold off
-- a handover from, and nothing to record (max_seen, a strict resource's last_used, the marker
-- protected tables read: a READ ONLY transaction writes none of them).
--
-- fence_full now answers there without a lock, from the resource row as the transaction sees it
-- (its snapshot under REPEATABLE READ / SERIALIZABLE: everything it reads was committed before a
-- token newer than that snapshot's): the current token is accepted (an external one above
-- max_seen too, not recorded), any other gets refuse's ZF001 / ZF003 as in a read-write
-- transaction (a strict resource's token already used by a committed transaction: ZF001). The
-- external fast path of fence() leaves READ ONLY transactions to it. Only the non-fast paths pay
-- the test (one current_setting); the fast path is unchanged.
--
-- Before PostgreSQL 16 a READ ONLY transaction may write large objects (lo_create, lowrite, ...:
-- PostgreSQL 16 refuses them there), which the lock would guard. Such a write assigns a
-- transaction id; a READ ONLY transaction with one (a large object, or a temporary table: the
-- fence cannot tell which) is refused there, 25006 with the fence's message, as the commit check
-- of fencing-jdbc and check_tokens_if_written then find it (PostgreSQL 16 and later: accepted,
-- only a temporary table can have been written). A large object written after the check of a READ
-- ONLY transaction on PostgreSQL before 16 is not held off (README, ARCHITECTURE V46).
--
-- mark_checked (the marker a protected table's trigger accepts, bound to the transaction id) now
-- returns at once in a READ ONLY transaction: no protected table can be written there, and on a
-- hot standby pg_current_xact_id() fails ("cannot execute pg_current_xact_id() during recovery"),
-- which made every check of a resource with protected tables fail there, the fast path's too
-- (HotStandbyCheckTest). A READ ONLY that ends with its savepoint leaves no marker behind: a later
-- write to a protected table is checked again. One current_setting more per marker elsewhere.
--
-- The bodies are edited in place (fence carries the advisory key space set_advisory_key_space
-- chose, V34), each text found exactly once.
DO $migration$
DECLARE
    v_edit text[];
    v_oid pg_catalog.oid;
    v_src text;
    v_def text;
    v_count integer;
BEGIN
    FOREACH v_edit SLICE 1 IN ARRAY ARRAY[
        -- function, the text replaced, its replacement
        ARRAY['${flyway:defaultSchema}.fence(text,bigint)',
              E'    IF p_token > 0 AND pg_catalog.current_setting(\'transaction_isolation\') = \'read committed\' THEN\n'
              '        -- External resources (V6): FOR SHARE',
              E'    IF p_token > 0 AND pg_catalog.current_setting(\'transaction_isolation\') = \'read committed\'\n'
              '       AND pg_catalog.current_setting(\'transaction_read_only\') = \'off\' THEN -- V46: READ ONLY: fence_full\n'
              '        -- External resources (V6): FOR SHARE'],
        ARRAY['${flyway:defaultSchema}.fence_full(text,bigint)',
              E'    r := ${flyway:defaultSchema}.find_resource(p_resource);\n',
              E'    r := ${flyway:defaultSchema}.find_resource(p_resource);\n'
              '    -- V46: a READ ONLY transaction can take no row lock (25006) and write nothing the lock\n'
              '    -- guards: the answer from the row as it sees it, no lock, nothing recorded\n'
              '    IF pg_catalog.current_setting(\'transaction_read_only\') = \'on\' THEN\n'
              '        IF pg_catalog.pg_current_xact_id_if_assigned() IS NOT NULL\n'
              '           AND pg_catalog.current_setting(\'server_version_num\')::integer < 160000 THEN\n'
              '            RAISE EXCEPTION USING ERRCODE = \'25006\',\n'
              '                MESSAGE = format(\'fencing: cannot check token %s for resource "%s" in a READ ONLY transaction that wrote: before PostgreSQL 16 it may have written a large object, which the check cannot lock for\',\n'
              '                                 p_token, r.name),\n'
              '                DETAIL = jsonb_build_object(\'resource\', r.name, \'token\', p_token)::text,\n'
              '                HINT = \'check before the transaction writes, or in a read-write transaction\';\n'
              '        END IF;\n'
              '        IF p_token >= r.max_seen AND (p_token = r.max_seen OR r.issuer = ''external'')\n'
              '           AND (r.issuer = ''external'' OR p_token <= r.last_issued)\n'
              '           AND NOT (r.strict_mode AND p_token <= r.last_used) THEN\n'
              '            RETURN false; -- accepted; nothing advanced\n'
              '        END IF;\n'
              '        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);\n'
              '        RAISE EXCEPTION \'fencing: read-only check of % on "%" fell through\', p_token, r.name; -- unreachable\n'
              '    END IF;\n'],
        ARRAY['${flyway:defaultSchema}.mark_checked(bigint,bigint)',
              E'BEGIN\n    SELECT s.secret INTO v_secret FROM ${flyway:defaultSchema}.marker_secret s;\n',
              E'BEGIN\n'
              '    IF pg_catalog.current_setting(\'transaction_read_only\') = \'on\' THEN\n'
              '        RETURN; -- V46: no protected table is written here; a hot standby has no transaction id\n'
              '    END IF;\n'
              '    SELECT s.secret INTO v_secret FROM ${flyway:defaultSchema}.marker_secret s;\n']
    ] LOOP
        v_oid := pg_catalog.to_regprocedure(v_edit[1]);
        v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
        v_def := pg_catalog.pg_get_functiondef(v_oid);
        v_count := (length(v_src) - length(replace(v_src, v_edit[2], ''))) / length(v_edit[2]);
        IF v_count <> 1 THEN
            RAISE EXCEPTION 'V46: the body of % holds "%" % times, not once', v_edit[1], v_edit[2], v_count;
        END IF;
        IF (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
            RAISE EXCEPTION 'V46: the definition of % does not hold its body once', v_edit[1];
        END IF;
        -- CREATE OR REPLACE keeps the owner, the grants and the search_path
        EXECUTE replace(v_def, v_src, replace(v_src, v_edit[2], v_edit[3]));
    END LOOP;
END
$migration$;
