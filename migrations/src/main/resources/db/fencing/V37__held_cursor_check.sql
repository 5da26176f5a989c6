-- A WITH HOLD cursor's query runs to its end inside COMMIT (PostgreSQL materializes it before the
-- transaction commits), after check_tokens_if_written tested whether the transaction wrote. A query
-- that writes (a view or an operator calling a writing function) found no transaction id at that
-- test: no check ran, and a stale token's write committed with the cursor. The test is now "has a
-- transaction id, or holds a holdable cursor": such a transaction is checked, and the check's lock
-- is held while COMMIT runs the cursor's query. fencing-jdbc sends the same test in its own SQL
-- (CheckLiteral.WRITTEN). A holdable cursor left open from an earlier transaction costs each later
-- commit of that session a check, never safety. (HeldCursorCheckTest; fencing-jdbc HoldCursorTest.)
--
-- The function's body is derived from the one in place (its fast path carries the advisory key
-- space set_advisory_key_space chose, V34): the one test is replaced, found exactly once.
DO $migration$
DECLARE
    v_oid pg_catalog.oid := '${flyway:defaultSchema}.check_tokens_if_written(text[],bigint[])'::pg_catalog.regprocedure;
    v_old text := 'IF pg_current_xact_id_if_assigned() IS NULL THEN';
    v_new text := 'IF pg_current_xact_id_if_assigned() IS NULL'
                  ' AND NOT EXISTS (SELECT FROM pg_cursor() c WHERE c.is_holdable) THEN';
    v_src text;
    v_def text;
BEGIN
    v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
    v_def := pg_catalog.pg_get_functiondef(v_oid);
    IF (length(v_src) - length(replace(v_src, v_old, ''))) / length(v_old) <> 1
       OR (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
        RAISE EXCEPTION 'V37: check_tokens_if_written''s body is not the one this migration derives its new body from';
    END IF;
    -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
    -- (pg_catalog, pg_temp: pg_cursor is pg_catalog's)
    EXECUTE replace(v_def, v_src, replace(v_src, v_old, v_new));
END
$migration$;
