#!/bin/bash
# The check's server CPU in a DO loop (ARCHITECTURE, "Where a fenced transaction's time goes").
# usage: check-cpu-loop.sh DATABASE VARIANT [N]   (psql as a superuser of a LOCAL server, since the
#        backend's CPU is read from /proc/<pid>/schedstat with pg_read_file)
# VARIANT: empty | floor | token | tokens | one | written
# The database is a migrated scratch database with a held lease on resource 'r' and a table
#   public.floor_t(name text PRIMARY KEY, max_seen bigint) holding ('r', <its max_seen>).
# Prints the backend's CPU and the wall time per transaction, in µs. Compare databases (before
# and after a migration) on one server, alternating, several rounds; report medians and ranges.
set -euo pipefail
db=$1; v=$2; n=${3:-10000}
xid="PERFORM pg_current_xact_id();" # a write transaction, without an UPDATE's dead versions
case $v in
  empty)   body="$xid";;
  floor)   body="PERFORM 1 FROM public.floor_t WHERE name = 'r' AND max_seen = tok FOR SHARE; $xid";;
  token)   body="PERFORM fencing.check_token('r', tok); $xid";;
  tokens)  body="PERFORM fencing.check_tokens('{r}', ARRAY[tok]); $xid";;
  one)     body="PERFORM fencing.check_one('r', tok); $xid";;
  written) body="$xid PERFORM fencing.check_tokens_if_written('{r}', ARRAY[tok]);";;
  *) echo "unknown variant $v" >&2; exit 2;;
esac
psql -X -qAt -v ON_ERROR_STOP=1 -d "$db" <<SQL 2>&1 | sed -n 's/^NOTICE: *//p'
SET synchronous_commit = off;
DO \$\$
DECLARE
  tok bigint := (SELECT max_seen FROM fencing.resource WHERE name = 'r');
  cpu text := '/proc/' || pg_backend_pid() || '/schedstat';
  c0 bigint; t0 timestamptz;
BEGIN
  FOR i IN 1..200 LOOP $body COMMIT; END LOOP; -- warm: plans cached
  t0 := clock_timestamp();
  c0 := split_part(pg_read_file(cpu), ' ', 1)::bigint;
  FOR i IN 1..$n LOOP $body COMMIT; END LOOP;
  RAISE NOTICE 'cpu % us, wall % us',
    round((split_part(pg_read_file(cpu), ' ', 1)::bigint - c0) / 1000.0 / $n, 1),
    round(extract(epoch FROM clock_timestamp() - t0) * 1e6 / $n, 1);
END \$\$;
SQL
