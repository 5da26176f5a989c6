#!/bin/bash
# What the backends of an 8-client run are doing: pg_stat_activity sampled every 10 ms.
# usage: waits.sh DB SCRIPT SECONDS
set -euo pipefail
db=$1; script=$2; secs=$3
: "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}" "${PGUSER:=postgres}"
export PGHOST PGPORT PGUSER
out=$(mktemp)
PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -c 8 -j 2 -T "$secs" -f "$script" "$db" > "$out" 2>&1 &
sleep 1
psql -X -Atq -d "$db" <<SQL
CREATE TEMP TABLE s (ev text);
DO \$\$ BEGIN FOR i IN 1..$(( (secs - 2) * 100 )) LOOP
  INSERT INTO s SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
   WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = current_database();
  PERFORM pg_sleep(0.01); END LOOP; END \$\$;
SELECT ev, count(*), round(100.0 * count(*) / sum(count(*)) OVER (), 1) FROM s GROUP BY ev ORDER BY 2 DESC;
SELECT locktype, mode, granted, count(*) FROM pg_locks WHERE locktype = 'advisory' GROUP BY 1, 2, 3;
SQL
wait
grep '^tps' "$out"; rm -f "$out"
