-- Three copies of pgbench's tables: u* unprotected, r* protect_rows_per_row(table, 'bid', 'p:'),
-- s* protect(table, 'hotp'). Leases: hot (token 1), hotp (2), p:1..p:1000 (k + 2),
-- b:1..b:1000 (k + 1002) in a fresh database (scripts.sh assumes it; the last query shows it).
-- The application role may log in (pgbench runs as it). Run as a superuser.
DO $$ DECLARE p text; BEGIN
FOREACH p IN ARRAY ARRAY['u','r','s'] LOOP
  EXECUTE format('CREATE TABLE %sacc (aid int PRIMARY KEY, bid int, abalance int, filler char(84))', p);
  EXECUTE format('CREATE TABLE %stel (tid int PRIMARY KEY, bid int, tbalance int, filler char(84))', p);
  EXECUTE format('CREATE TABLE %sbr (bid int PRIMARY KEY, bbalance int, filler char(88))', p);
  EXECUTE format('CREATE TABLE %shist (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))', p);
  EXECUTE format('INSERT INTO %sbr SELECT g, 0 FROM generate_series(1, 1000) g', p);
  EXECUTE format('INSERT INTO %stel SELECT g, (g - 1) / 10 + 1, 0 FROM generate_series(1, 10000) g', p);
  EXECUTE format('INSERT INTO %sacc SELECT g, (g - 1) / 100 + 1, 0 FROM generate_series(1, 100000) g', p);
END LOOP; END $$;
SELECT count(*) FROM fencing.try_acquire('hot', 'bench', interval '7 days');
SELECT count(*) FROM fencing.try_acquire('hotp', 'bench', interval '7 days');
SELECT count(*) FROM generate_series(1, 1000) g CROSS JOIN LATERAL fencing.try_acquire('p:' || g, 'bench', interval '7 days') a;
SELECT count(*) FROM generate_series(1, 1000) g CROSS JOIN LATERAL fencing.try_acquire('b:' || g, 'bench', interval '7 days') a;
SELECT fencing.protect_rows_per_row(t::regclass, 'bid', 'p:') FROM unnest(ARRAY['racc','rtel','rbr','rhist']) t;
SELECT fencing.protect(t::regclass, 'hotp') FROM unnest(ARRAY['sacc','stel','sbr','shist']) t;
DO $$ BEGIN EXECUTE format('ALTER ROLE %I LOGIN', current_database() || '_app');
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', current_database() || '_app'); END $$;
VACUUM ANALYZE;
SELECT name, max_seen, has_protected FROM fencing.resource WHERE name IN ('hot','hotp','p:1','p:1000','b:1','b:1000') ORDER BY 1;
