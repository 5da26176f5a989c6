#!/bin/bash
# Server instructions of the check's shapes (issue 14), on carry-cpu-callgrind.sh's scratch cluster
# (start it first: carry-cpu-callgrind.sh start PORT). One pgbench client (-M prepared, one
# backend), 100 warm-up and N transactions; the backend's count per transaction less heap pruning,
# and the SECURITY DEFINER call's (the check function's) share.
# usage: check-shapes-callgrind.sh setup PORT              a database "shapes": migrations by psql,
#                                                          a table, a lease, check-shapes.sql
#        check-shapes-callgrind.sh fn PORT FUNCTION [N]    BEGIN; SELECT FUNCTION('probe', 1);
#                                                          UPDATE; COMMIT (check_one: the current)
#        check-shapes-callgrind.sh commit PORT SHAPE [N]   a read (ro_) or an UPDATE (w_), then no
#                                                          check (none), check_tokens_if_written
#                                                          (old) or the guarded check_one (new);
#                                                          a read's trailing check, literal:
#                                                          guarded arrays (arrays), check_one
#                                                          (literal)
#        check-shapes-callgrind.sh separate PORT SHAPE [N] BEGIN; the statements the check is
#                                                          carried as; UPDATE; COMMIT, each its
#                                                          own command (a Sync each). SHAPE: none,
#                                                          noop (SELECT 1), one (check_one), ab
#                                                          (check-shapes.sql's two statements),
#                                                          name (the lock keyed by the name, as
#                                                          n1; V28 made the exclusive lockers take it)
set -euo pipefail
dir=${CARRY_CG_DIR:-/tmp/carry-cg}
here=$(cd "$(dirname "$0")" && pwd)
port=$2
psql="psql -q -h 127.0.0.1 -p $port -U postgres -v ON_ERROR_STOP=1"
measure() { # script file, n
  $psql -d shapes -c "VACUUM acct"
  local before; before=$(ls $dir/cg.* 2>/dev/null | sort || true)
  pgbench -n -M prepared -h 127.0.0.1 -p $port -U postgres -D r=probe -c 1 -t $(($2 + 100)) \
    -f "$1" shapes >/dev/null
  sleep 3 # the backend writes its count when it exits
  for x in $(comm -13 <(echo "$before") <(ls $dir/cg.* | sort)); do
    out=$(callgrind_annotate --inclusive=yes $x 2>/dev/null)
    get() { echo "$out" | grep -m1 -F "???:$1 " | awk '{gsub(",","",$1); print $1}' || true; }
    t=$(get PostgresMain); [ -n "$t" ] && [ $((t / ($2 + 100))) -gt 50000 ] || continue
    pr=$(get heap_page_prune_opt); f=$(get fmgr_security_definer)
    echo "$3: $(( (t - ${pr:-0}) / ($2 + 100) )) per transaction, check function $(( ${f:-0} / ($2 + 100) ))"
  done
}
case $1 in
  setup)
    $psql -d postgres -c "CREATE DATABASE shapes"
    $psql -d shapes -c "CREATE SCHEMA fencing"
    m=$here/../../migrations/src/main/resources/db/fencing
    sub() { sed -e 's/\${flyway:defaultSchema}/fencing/g; s/\${app_role}/shapes_app/g' \
      -e 's/\${owner_role}/shapes_owner/g; s/\${flyway:table}/fencing_schema_history/g' "$@"; }
    for v in $(ls $m | sed -n 's/^V\([0-9]*\)__.*/\1/p' | sort -n); do
      sub $m/beforeEachMigrate.sql $m/V${v}__*.sql $m/afterEachMigrate.sql | $psql -d shapes -1 >/dev/null
    done
    $psql -d shapes -c "CREATE TABLE acct (id int PRIMARY KEY, v int NOT NULL)" \
      -c "INSERT INTO acct SELECT g, 0 FROM generate_series(1, 1000) g" \
      -c "SELECT fencing.try_acquire('probe', 'h', '1 day')" -f $here/check-shapes.sql >/dev/null
    ;;
  fn)
    s=$(mktemp); printf '\\set id random(1, 1000)\nBEGIN;\nSELECT %s(:r, 1);\nUPDATE acct SET v = v + 1 WHERE id = :id;\nCOMMIT;\n' "$3" > $s
    measure $s ${4:-300} $3
    ;;
  commit)
    case $3 in ro_*) op='SELECT v FROM acct WHERE id = :id;';; *) op='UPDATE acct SET v = v + 1 WHERE id = :id;';; esac
    case $3 in
      *_none) check='';;
      *_old) check='SELECT fencing.check_tokens_if_written(ARRAY[:r]::text[], ARRAY[1]::bigint[]);';;
      *_new) check='SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE fencing.check_one(:r, 1) END;';;
      # the check behind an autocommit read (CheckLiteral.ifWritten), literal: before, then now
      *_arrays) check="SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE fencing.check_tokens_if_written(ARRAY[E'probe']::text[], ARRAY[1]::bigint[]) END;";;
      *_literal) check="SELECT CASE WHEN pg_catalog.pg_current_xact_id_if_assigned() IS NULL THEN NULL ELSE fencing.check_one(E'probe', 1::bigint) END;";;
    esac
    s=$(mktemp); printf '\\set id random(1, 1000)\nBEGIN;\n%s\n%s\nCOMMIT;\n' "$op" "$check" > $s
    measure $s ${4:-300} $3
    ;;
  separate)
    case $3 in
      none) check='';;
      one) check='SELECT fencing.check_one(:r, :t);';;
      ab) check="SELECT pg_catalog.pg_advisory_xact_lock_shared(c.lock_space, c.lock_key), pg_catalog.set_config('fencing.probe_locked', c.tag, true) FROM fencing.probe_accept c WHERE c.name = :r AND c.max_seen = :t;
SELECT coalesce((SELECT 0 FROM fencing.probe_accept c WHERE c.name = :r AND c.max_seen = :t AND NOT c.has_protected AND c.tag = pg_catalog.current_setting('fencing.probe_locked', true)), fencing.check_one(:r, :t));";;
      noop) check='SELECT 1;';;
      name) check="SELECT pg_catalog.pg_advisory_xact_lock_shared(1178946115, pg_catalog.hashtext(:r));
SELECT coalesce((SELECT 0 FROM fencing.probe_accept c WHERE c.name = :r AND c.max_seen = :t AND NOT c.has_protected AND c.lock_space = 1178946115), fencing.check_one(:r, :t));";;
    esac
    s=$(mktemp); printf '\\set id random(1, 1000)\n\\set t 1\nBEGIN;\n%s\nUPDATE acct SET v = v + 1 WHERE id = :id;\nCOMMIT;\n' "$check" > $s
    measure $s ${4:-300} separate_$3
    ;;
  *) echo "usage: $0 setup PORT | fn PORT FUNCTION [N] | commit PORT SHAPE [N] | separate PORT SHAPE [N]" >&2; exit 2;;
esac
