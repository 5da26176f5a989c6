#!/bin/bash
# Server instructions per transaction of one backend, stable on a loaded machine.
# usage: callgrind.sh DB SCRIPT...   (pgbench scripts of scripts.sh, in the current directory)
# Needs the cluster's postmaster started under callgrind, writing one file per process into
# $CG_DIR (a backend's file is written when it exits), e.g. as the server's OS user:
#   valgrind --tool=callgrind --callgrind-out-file=$CG_DIR/cg.%p postgres -D DATADIR -p PORT ...
# with autovacuum off (ALTER SYSTEM SET autovacuum = off) so that no worker's file is taken for the
# backend's. Each script runs twice, 300 and 1,300 transactions, one client, -M prepared,
# synchronous_commit off; the result is (Ir at 1,300 - Ir at 300) / 1,000, which cancels the
# connection's start and end. The annotated profiles stay in $CG_DIR (callgrind_annotate).
set -euo pipefail
db=$1; shift
: "${CG_DIR:?set CG_DIR}" "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}" "${PGUSER:=postgres}"
export PGHOST PGPORT PGUSER
for script in "$@"; do
  declare -A ir
  for n in 300 1300; do
    before=$(ls "$CG_DIR" | sort)
    PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -c 1 -t $n -f "$script" "$db" >/dev/null
    sleep 1.5
    # the run's largest new file is its backend's (pgbench's first connection is smaller)
    f=$(for g in $(comm -13 <(echo "$before") <(ls "$CG_DIR" | sort)); do
          echo "$(grep -m1 '^summary:' "$CG_DIR/$g" | cut -d' ' -f2) $g"; done | sort -n | tail -1 | cut -d' ' -f2)
    ir[$n]=$(grep -m1 '^summary:' "$CG_DIR/$f" | cut -d' ' -f2)
    mv "$CG_DIR/$f" "$CG_DIR/$db-${script%.sql}-$n.out"
  done
  echo "$db $script $(( (ir[1300] - ir[300]) / 1000 )) instructions per transaction"
done
