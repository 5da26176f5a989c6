-- check_token of acct/1 per transaction (backend CPU, /proc/<pid>/schedstat), 10,000 transactions; as
-- postgres on a database of mk.sh after setup.sql. Protected (has_protected) or not: compare after
-- fencing.unprotect of every table covering acct/1 (V17 clears the flag).
SET synchronous_commit = off;
DO $$
DECLARE
  tok bigint := (SELECT token FROM tok);
  cpu text := '/proc/' || pg_backend_pid() || '/schedstat';
  c0 bigint;
BEGIN
  FOR i IN 1..200 LOOP PERFORM fencing.check_token('acct/1', tok); PERFORM pg_current_xact_id(); COMMIT; END LOOP;
  c0 := split_part(pg_read_file(cpu), ' ', 1)::bigint;
  FOR i IN 1..10000 LOOP PERFORM fencing.check_token('acct/1', tok); PERFORM pg_current_xact_id(); COMMIT; END LOOP;
  RAISE NOTICE 'cpu % us', round((split_part(pg_read_file(cpu), ' ', 1)::bigint - c0) / 1000.0 / 10000, 1);
END $$;
