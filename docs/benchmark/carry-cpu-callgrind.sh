#!/bin/bash
# The carried check's server CPU, counted in instructions (ARCHITECTURE, "The carried check's
# server CPU"). Instruction counts are stable on a loaded machine, unlike CPU time.
# usage: carry-cpu-callgrind.sh start PORT | run PORT [N] [VARIANTS] | report | stop
#   start: a scratch PostgreSQL 15 cluster in /tmp/carry-cg under callgrind (every backend writes
#          /tmp/carry-cg/cg.<pid> when it exits); run as root (initdb runs as postgres)
#   run:   fencing-jdbc's CarryCpuProbe against it: per variant one backend, 100 warm-up and N
#          transactions of one single-row UPDATE each (VACUUM before each backend)
#   report: per variant, the backend's instructions per transaction, less heap pruning of the
#          updated table (state-dependent, and the UPDATE's own), and the check function's share
set -euo pipefail
dir=${CARRY_CG_DIR:-/tmp/carry-cg} # the scratch cluster, its counts and the probe's map
bin=$(ls -d /usr/lib/postgresql/15/bin)
case ${1:-} in
  start)
    mkdir -p $dir && chown postgres $dir
    su postgres -c "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
    cat >> $dir/data/postgresql.conf <<CONF
port = $2
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
autovacuum = off
CONF
    su postgres -c "cd $dir && nohup valgrind --tool=callgrind --trace-children=yes \
      --callgrind-out-file=$dir/cg.%p $bin/postgres -D $dir/data > $dir/pg.log 2>&1 &"
    ;;
  run)
    rm -f $dir/cg.[0-9]*
    FENCING_TEST_JDBC_URL=jdbc:postgresql://127.0.0.1:$2/postgres FENCING_TEST_USER=postgres \
      ./mvnw -q -o -pl fencing-jdbc -am -Dsurefire.failIfNoSpecifiedTests=false \
      -Dtest=${PROBE:-CarryCpuProbe} -Dfencing.deployerRun.skip=true -Dprobe.cg=$dir/map.txt \
      -Dprobe.n=${3:-500} ${4:+-Dprobe.variants=$4} verify
    ;;
  report)
    while read -r pid v n; do
      out=$(callgrind_annotate --inclusive=yes $dir/cg.$pid 2>/dev/null)
      get() { echo "$out" | grep -m1 -F "???:$1 " | awk '{gsub(",","",$1); print $1}' || true; }
      t=$(get PostgresMain); pr=$(get heap_page_prune_opt); f=$(get fmgr_security_definer)
      echo "$v: $(( (t - ${pr:-0}) / (n + 100) )) per transaction, check function $(( ${f:-0} / (n + 100) ))"
    done < $dir/map.txt
    ;;
  stop)
    su postgres -c "$bin/pg_ctl -D $dir/data stop -m fast"
    ;;
  *) echo "usage: $0 start PORT | run PORT [N] [VARIANTS] | report | stop" >&2; exit 2;;
esac
