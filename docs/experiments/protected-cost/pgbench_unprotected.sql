\set b random(1, 10)
\set a (:b - 1) * 1000 + random(1, 1000)
\set t (:b - 1) * 10 + random(1, 10)
\set d random(-5000, 5000)
BEGIN;
SELECT fencing.check_one('ubr:' || :b, (SELECT u FROM ptok WHERE bid = :b));
UPDATE ua SET abalance = abalance + :d WHERE aid = :a;
SELECT abalance FROM ua WHERE aid = :a;
UPDATE ut SET tbalance = tbalance + :d WHERE tid = :t;
UPDATE ut SET tbalance = tbalance - :d WHERE tid = :t;
UPDATE ub SET bbalance = bbalance + :d WHERE bid = :b;
INSERT INTO uh (tid, bid, aid, delta, mtime) VALUES (:t, :b, :a, :d, CURRENT_TIMESTAMP);
END;
