create table if not exists u (id bigserial primary key, acct int, amount int);
create table if not exists t (id bigserial primary key, acct int, amount int);
select fencing.create_resource('acct/1');
select fencing.protect_rows('t','acct','acct/');
create table if not exists tok as select token from fencing.try_acquire('acct/1','b', interval '10 hours');
create or replace function cpu() returns bigint language sql as $$
  select (split_part(s,' ',14)::bigint + split_part(s,' ',15)::bigint) from (select split_part(pg_read_file('/proc/'||pg_backend_pid()||'/stat'), ') ', 2) s) x $$;
create table if not exists res (label text, us float8, at timestamptz default now());
