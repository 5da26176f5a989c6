#!/bin/bash
# The lease's server CPU, counted in instructions (ARCHITECTURE, "Lease operations at the floor",
# V26). Instruction counts are stable on a loaded machine, unlike CPU time.
# usage: lease-cpu-callgrind.sh start PORT | run PORT DB | stop
#   start: a scratch PostgreSQL 15 cluster in /tmp/lease-cg under callgrind (every backend writes
#          /tmp/lease-cg/cg.<pid> when it exits); run as root (initdb runs as postgres). Then create
#          and migrate a database with the migrations CLI (--url jdbc:postgresql://127.0.0.1:PORT/DB).
#   run:   pgbench (-M prepared, one client) sends per operation the three statements LeaseClient
#          sends (BEGIN ISOLATION LEVEL READ COMMITTED; the statement; COMMIT), 100 and then 600
#          acquire+release, each run on a resource of its own; prints the backend's instructions
#          per acquire+release, (600-run - 100-run) / 500, so connection set-up and first plans
#          drop out
set -euo pipefail
dir=${LEASE_CG_DIR:-/tmp/lease-cg}
bin=$(ls -d /usr/lib/postgresql/15/bin)
backend() { # instructions in PostgresMain of the largest backend that exited since $1
  best=0
  for f in $(comm -13 <(echo "$1") <(ls $dir/cg.* | sort)); do
    t=$(callgrind_annotate --inclusive=yes $f 2>/dev/null | grep -m1 -F "???:PostgresMain " \
      | awk '{gsub(",","",$1); print $1}')
    [ -n "$t" ] && [ "$t" -gt "$best" ] && best=$t
  done
  echo $best
}
ops() { # PORT DB RESOURCE N: instructions of one pgbench backend doing N acquire+release
  before=$(ls $dir/cg.* 2>/dev/null | sort)
  pgbench -h 127.0.0.1 -p $1 -U postgres -n -M prepared -D res=$3 -f $dir/ar.sql -t $4 $2 >/dev/null
  sleep 6 # the backend writes its counts when it exits
  backend "$before"
}
case ${1:-} in
  start)
    mkdir -p $dir && chown postgres $dir
    su postgres -c "$bin/initdb -D $dir/data -A trust -U postgres" >/dev/null
    cat >> $dir/data/postgresql.conf <<CONF
port = $2
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = off
autovacuum = off
CONF
    su postgres -c "cd $dir && nohup valgrind --tool=callgrind --trace-children=yes \
      --callgrind-out-file=$dir/cg.%p $bin/postgres -D $dir/data > $dir/pg.log 2>&1 &"
    ;;
  run)
    cat > $dir/ar.sql <<'SQL'
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT a.acquired, a.token, a.holder, a.expires_at, extract(epoch FROM a.expires_at - clock_timestamp()) FROM fencing.try_acquire(:res, 'cg', 30000000 * interval '1 microsecond', 5000000 * interval '1 microsecond') a \gset
COMMIT;
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT fencing.release(:res, :token), pg_catalog.set_config('synchronous_commit', 'off', true);
COMMIT;
SQL
    tag=$(date +%s)
    a=$(ops $2 $3 cg-$tag-a 100)
    b=$(ops $2 $3 cg-$tag-b 600)
    echo "$3: $(( (b - a) / 500 )) backend instructions per acquire+release"
    ;;
  stop)
    su postgres -c "$bin/pg_ctl -D $dir/data stop -m fast"
    ;;
  *) echo "usage: $0 start PORT | run PORT DB | stop" >&2; exit 2;;
esac
