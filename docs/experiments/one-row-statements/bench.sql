-- server CPU of this backend (/proc/<pid>/stat utime+stime, 10 ms ticks) per op; each loop one transaction
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ begin for i in 1..30000 loop insert into u(acct, amount) values (1, i); end loop; end $$;
insert into res(label, us) select 'insert1 u', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ begin for i in 1..30000 loop insert into t(acct, amount) values (1, i); end loop; end $$;
insert into res(label, us) select 'insert1 t', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ declare m bigint := (select min(id) from u); begin for i in 0..29999 loop update u set amount = amount + 1 where id = m + i; end loop; end $$;
insert into res(label, us) select 'update1 u', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ declare m bigint := (select min(id) from t); begin for i in 0..29999 loop update t set amount = amount + 1 where id = m + i; end loop; end $$;
insert into res(label, us) select 'update1 t', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
insert into u(acct, amount) select 1, g from generate_series(1, 200000) g;
insert into res(label, us) select 'bulk u', (cpu() - :c0) * 10000.0 / 200000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
insert into t(acct, amount) select 1, g from generate_series(1, 200000) g;
insert into res(label, us) select 'bulk t', (cpu() - :c0) * 10000.0 / 200000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
delete from t; delete from u; commit; vacuum t; vacuum u;
