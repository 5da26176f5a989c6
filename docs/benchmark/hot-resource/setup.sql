-- Issue 14, one hot resource: tables and resources for the pgbench scripts of scripts.sh, in a
-- scratch database where the fence is migrated (e.g. java -jar fencing-benchmark.jar --url
-- jdbc:postgresql://HOST:PORT/DB --user postgres --no-benchmark). Run as a superuser.
-- 'hot' gets a token first, then branch:1..branch:1000 in order, so that in a fresh database
-- hot's token is 3 and branch:k's is k + 3 (scripts.sh assumes it; the last query checks it).
CREATE TABLE acc (aid int PRIMARY KEY, bid int, abalance int, filler char(84));
CREATE TABLE tel (tid int PRIMARY KEY, bid int, tbalance int, filler char(84));
CREATE TABLE br (bid int PRIMARY KEY, bbalance int, filler char(88));
CREATE TABLE hist (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22));
INSERT INTO br SELECT g, 0 FROM generate_series(1, 1000) g;
INSERT INTO tel SELECT g, (g - 1) / 10 + 1, 0 FROM generate_series(1, 10000) g;
INSERT INTO acc SELECT g, (g - 1) / 100 + 1, 0 FROM generate_series(1, 100000) g;
CREATE TABLE item (id int PRIMARY KEY, v bigint NOT NULL DEFAULT 0) WITH (fillfactor = 50);
INSERT INTO item (id) SELECT g FROM generate_series(1, 1000) g;
SELECT count(*) FROM fencing.try_acquire('hot', 'bench', interval '7 days');
SELECT count(*) FROM generate_series(1, 1000) g
 CROSS JOIN LATERAL fencing.try_acquire('branch:' || g, 'bench', interval '7 days') a;
CREATE TABLE floor_t (name text PRIMARY KEY, max_seen bigint);
INSERT INTO floor_t SELECT name, max_seen FROM fencing.resource WHERE name = 'hot' OR name LIKE 'branch:%';
VACUUM ANALYZE;
SELECT CASE WHEN count(*) = 1001 THEN 'tokens as scripts.sh expects' ELSE 'tokens differ: edit scripts.sh' END
  FROM fencing.resource
 WHERE (name = 'hot' AND max_seen = 3) OR (name LIKE 'branch:%' AND max_seen = substr(name, 8)::int + 3);
