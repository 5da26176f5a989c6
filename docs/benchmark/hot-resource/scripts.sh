#!/bin/bash
# Writes the pgbench scripts of the hot-resource measurements into the current directory:
# tpcb-<variant>.sql (pgbench's TPC-B-like transaction, branch drawn from 1,000) and
# upd-<variant>.sql (one UPDATE of the client's own row, as growth-multixact), where <variant> is
# unfenced, fenced-hot (every client checks hot's token), fenced-1000 (the branch's token),
# floor-hot / floor-1000 (the SQL-level floor: SELECT ... FOR SHARE of floor_t). The check and the
# floor's read are sent as a statement of their own, first (pgbench -M prepared cannot send two
# statements in one message, as fencing-jdbc's carried check does).
set -euo pipefail
body='UPDATE acc SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM acc WHERE aid = :aid;
UPDATE tel SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE br SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO hist (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;'
hdr='\set bid random(1, 1000)
\set tid (:bid - 1) * 10 + random(1, 10)
\set aid (:bid - 1) * 100 + random(1, 100)
\set delta random(-5000, 5000)
\set tok :bid + 3
BEGIN;'
tpcb() { printf '%s\n%s%s\n' "$hdr" "${2:+$2
}" "$body" > "tpcb-$1.sql"; }
tpcb unfenced ""
tpcb fenced-hot "SELECT fencing.check_tokens(ARRAY['hot'], ARRAY[3::bigint]);"
tpcb fenced-1000 "SELECT fencing.check_tokens(ARRAY['branch:' || :bid], ARRAY[:tok::bigint]);"
tpcb floor-hot "SELECT 1 FROM floor_t WHERE name = 'hot' AND max_seen = 3 FOR SHARE;"
tpcb floor-1000 "SELECT 1 FROM floor_t WHERE name = 'branch:' || :bid AND max_seen = :tok FOR SHARE;"
upd() { printf '%sBEGIN;\n%sUPDATE item SET v = v + 1 WHERE id = :client_id + 1;\nEND;\n' "$2" "${3:+$3
}" > "upd-$1.sql"; }
upd unfenced "" ""
upd fenced-hot "" "SELECT fencing.check_tokens(ARRAY['hot'], ARRAY[3::bigint]);"
upd fenced-1000 '\set tok :client_id + 4
' "SELECT fencing.check_tokens(ARRAY['branch:' || (:client_id + 1)], ARRAY[:tok::bigint]);"
upd floor-hot "" "SELECT 1 FROM floor_t WHERE name = 'hot' AND max_seen = 3 FOR SHARE;"
