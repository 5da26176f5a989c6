-- per statement, backend CPU: one-row INSERT and UPDATE into s (protect) and u (unprotected), in one checked transaction
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ begin for i in 1..30000 loop insert into u(acct, amount) values (1, i); end loop; end $$;
insert into res(label, us) select 'insert1 u', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ begin for i in 1..30000 loop insert into s(acct, amount) values (1, i); end loop; end $$;
insert into res(label, us) select 'insert1 s', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
select cpu() c0 \gset
do $$ declare m bigint := (select min(id) from s); begin for i in 0..29999 loop update s set amount = amount + 1 where id = m + i; end loop; end $$;
insert into res(label, us) select 'update1 s', (cpu() - :c0) * 10000.0 / 30000; commit;
begin; select fencing.check_token('acct/1', (select token from tok)) \g /dev/null
delete from s; delete from u; commit; vacuum s; vacuum u;
