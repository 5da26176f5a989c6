#!/bin/bash
# mk.sh DB UPTO : scratch database with migrations 1..UPTO (placeholders substituted), as postgres
set -e
DB=$1; UPTO=$2; D=$(cd "$(dirname "$0")/../../../migrations/src/main/resources/db/fencing" && pwd)
psql -q -h 127.0.0.1 -U postgres -c "drop database if exists $DB" -c "create database $DB"
psql -q -h 127.0.0.1 -U postgres -d $DB -c "create schema fencing"
for v in $(ls $D | grep '^V' | sed 's/^V\([0-9]*\)__.*/\1/' | sort -n); do
  [ $v -le $UPTO ] || continue
  f=$(ls $D/V${v}__*.sql)
  for g in $D/beforeEachMigrate.sql $f $D/afterEachMigrate.sql; do
    sed -e 's/\${flyway:defaultSchema}/fencing/g' -e "s/\${owner_role}/${DB}_owner/g" -e "s/\${app_role}/${DB}_app/g" -e 's/\${flyway:table}/flyway_schema_history/g' $g > ${TMPDIR:-/tmp}/cur.sql
    psql -q -1 -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d $DB -f ${TMPDIR:-/tmp}/cur.sql >/dev/null 2>${TMPDIR:-/tmp}/err || { echo "FAIL $g"; cat ${TMPDIR:-/tmp}/err; exit 1; }
  done
done
echo ok $DB $UPTO
