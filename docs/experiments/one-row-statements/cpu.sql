create or replace function cpu() returns bigint language sql as $$
  select (split_part(s,' ',12)::bigint + split_part(s,' ',13)::bigint)
    from (select split_part(pg_read_file('/proc/' || pg_backend_pid() || '/stat', 0, 2000), ') ', 2) s) x $$;
