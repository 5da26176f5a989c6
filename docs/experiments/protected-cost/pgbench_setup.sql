-- Scratch set-up for docs/benchmark/protected-cost.md, "Through the client, statement by
-- statement (pgbench -r)": pgbench's four tables twice, small (10 branches), one copy protected per
-- row (protect_rows_per_row on bid, resources pbr:<bid>) and one plain, and a token per branch for
-- each (pbr:<bid> protected, ubr:<bid> not). Run as a superuser on a database the fence's migrations
-- were applied to; the leases last six hours.
DROP TABLE IF EXISTS pa, pt, pb, ph, ua, ut, ub, uh;
CREATE TABLE pa (aid int PRIMARY KEY, bid int NOT NULL, abalance int NOT NULL, filler char(84));
CREATE TABLE pt (tid int PRIMARY KEY, bid int NOT NULL, tbalance int NOT NULL, filler char(84));
CREATE TABLE pb (bid int PRIMARY KEY, bbalance int NOT NULL, filler char(88));
CREATE TABLE ph (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
CREATE TABLE ua (LIKE pa INCLUDING ALL); CREATE TABLE ut (LIKE pt INCLUDING ALL);
CREATE TABLE ub (LIKE pb INCLUDING ALL); CREATE TABLE uh (LIKE ph INCLUDING ALL);
INSERT INTO pb SELECT b, 0 FROM generate_series(1,10) b; INSERT INTO ub SELECT * FROM pb;
INSERT INTO pt SELECT t, 1 + (t-1)/10, 0 FROM generate_series(1,100) t; INSERT INTO ut SELECT * FROM pt;
INSERT INTO pa SELECT a, 1 + (a-1)/1000, 0 FROM generate_series(1,10000) a; INSERT INTO ua SELECT * FROM pa;
SELECT fencing.protect_rows_per_row('pa', 'bid', 'pbr:'), fencing.protect_rows_per_row('pt', 'bid', 'pbr:'),
       fencing.protect_rows_per_row('pb', 'bid', 'pbr:'), fencing.protect_rows_per_row('ph', 'bid', 'pbr:');
DROP TABLE IF EXISTS ptok; CREATE TABLE ptok (bid int, p bigint, u bigint);
INSERT INTO ptok SELECT b, (SELECT token FROM fencing.try_acquire('pbr:' || b, 'h', interval '6 hours', interval '5 s')),
                           (SELECT token FROM fencing.try_acquire('ubr:' || b, 'h', interval '6 hours', interval '5 s'))
  FROM generate_series(1,10) b;
VACUUM ANALYZE pa, pt, pb, ph, ua, ut, ub, uh;
