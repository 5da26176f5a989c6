\set b random(1, 10)
\set a (:b - 1) * 1000 + random(1, 1000)
\set t (:b - 1) * 10 + random(1, 10)
\set d random(-5000, 5000)
BEGIN;
SELECT fencing.check_one('pbr:' || :b, (SELECT p FROM ptok WHERE bid = :b));
UPDATE pa SET abalance = abalance + :d WHERE aid = :a;
SELECT abalance FROM pa WHERE aid = :a;
UPDATE pt SET tbalance = tbalance + :d WHERE tid = :t;
UPDATE pt SET tbalance = tbalance - :d WHERE tid = :t;
UPDATE pb SET bbalance = bbalance + :d WHERE bid = :b;
INSERT INTO ph (tid, bid, aid, delta, mtime) VALUES (:t, :b, :a, :d, CURRENT_TIMESTAMP);
END;
