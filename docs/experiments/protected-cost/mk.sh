#!/bin/bash
# mk.sh DB UPTO [FILE...]: scratch database with migrations 1..UPTO (placeholders substituted,
# roles DB_owner / DB_app), then each FILE as a further migration. As postgres on PGPORT.
set -e
DB=$1; UPTO=$2; shift 2
D=$(cd "$(dirname "$0")/../../../migrations/src/main/resources/db/fencing" && pwd)
P="psql -q -h 127.0.0.1 -p ${PGPORT:-5432} -U postgres"
$P -c "drop database if exists $DB" -c "create database $DB"
$P -d $DB -c "create schema fencing"
files=()
for v in $(ls $D | grep '^V' | sed 's/^V\([0-9]*\)__.*/\1/' | sort -n); do
  [ $v -le $UPTO ] && files+=($(ls $D/V${v}__*.sql))
done
for f in "${files[@]}" "$@"; do
  for g in $D/beforeEachMigrate.sql $f $D/afterEachMigrate.sql; do
    sed -e 's/\${flyway:defaultSchema}/fencing/g' -e "s/\${owner_role}/${DB}_owner/g" \
        -e "s/\${app_role}/${DB}_app/g" -e 's/\${flyway:table}/flyway_schema_history/g' $g > ${TMPDIR:-/tmp}/cur.sql
    $P -1 -v ON_ERROR_STOP=1 -d $DB -f ${TMPDIR:-/tmp}/cur.sql >/dev/null
  done
done
echo ok $DB $UPTO "$@"
