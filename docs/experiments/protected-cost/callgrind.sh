#!/bin/bash
# callgrind.sh DB SCRIPT...: server instructions per transaction of one backend, (Ir at N2 - Ir at N1)
# / (N2 - N1), which cancels the connection. Needs the postmaster under callgrind writing
# $CG_DIR/cg.%p (see README). pgbench runs as ${db}_app unless PGUSER is set.
set -euo pipefail
db=$1; shift
CG_DIR=${CG_DIR:-/tmp/prot-cg}; N1=${N1:-100}; N2=${N2:-600}
export PGHOST=127.0.0.1 PGPORT=${PGPORT:-55614} PGUSER=${PGUSER:-${db}_app}
for script in "$@"; do
  declare -A ir
  for n in $N1 $N2; do
    before=$(ls "$CG_DIR" | sort)
    PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -c 1 -t $n -f "$script" "$db" >$CG_DIR/pgbench.out 2>&1 || { cat $CG_DIR/pgbench.out; exit 1; }
    sleep 2
    f=$(for g in $(comm -13 <(echo "$before") <(ls "$CG_DIR" | sort)); do
          echo "$(grep -m1 '^summary:' "$CG_DIR/$g" | cut -d' ' -f2) $g"; done | sort -n | tail -1 | cut -d' ' -f2)
    ir[$n]=$(grep -m1 '^summary:' "$CG_DIR/$f" | cut -d' ' -f2)
    mv "$CG_DIR/$f" "$CG_DIR/$db-${script%.sql}-$n.out"
  done
  echo "$db $script $(( (ir[$N2] - ir[$N1]) / (N2 - N1) )) instructions per transaction"
done
