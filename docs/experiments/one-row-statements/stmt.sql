-- whole-table protection (protect): one-row INSERT / UPDATE into s (protected by acct/1) against u
create table if not exists s (id bigserial primary key, acct int, amount int);
select fencing.protect('s', 'acct/1') where not exists (select from fencing.protected_table where tbl = 's'::regclass);
