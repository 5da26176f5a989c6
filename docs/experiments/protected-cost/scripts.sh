#!/bin/bash
# Writes the pgbench scripts into the current directory: pgbench's TPC-B-like transaction (branch
# drawn from 1,000), the check sent first as a statement of its own (as the carried check costs the
# server the same, ARCHITECTURE "The carried check's server CPU"): tpcb-unfenced, tpcb-fenced-hot,
# tpcb-fenced-1000 (unprotected tables), tpcb-prot-row (r*, the branch's p: token),
# tpcb-prot-stmt (s*, hotp's token).
set -euo pipefail
hdr='\set bid random(1, 1000)
\set tid (:bid - 1) * 10 + random(1, 10)
\set aid (:bid - 1) * 100 + random(1, 100)
\set delta random(-5000, 5000)
BEGIN;'
body() { printf 'UPDATE %sacc SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM %sacc WHERE aid = :aid;
UPDATE %stel SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE %sbr SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO %shist (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;\n' $1 $1 $1 $1 $1; }
mk() { { echo "$hdr"; [ -n "$3" ] && echo "$3"; body $2; } > tpcb-$1.sql; }
mk unfenced u ""
mk fenced-hot u "SELECT fencing.check_one('hot', 1);"
mk fenced-1000 u "SELECT fencing.check_one('b:' || :bid, :bid + 1002);"
mk prot-row r "SELECT fencing.check_one('p:' || :bid, :bid + 2);"
mk prot-stmt s "SELECT fencing.check_one('hotp', 2);"
