create or replace procedure tx_loop(p_n int, p_tbl text) language plpgsql as $$
declare v_tok bigint := (select token from tok);
begin
  for i in 1..p_n loop
    perform fencing.check_token('acct/1', v_tok);
    if p_tbl = 't' then
      insert into t(acct, amount) values (1, i); insert into t(acct, amount) values (1, i); update t set amount = amount + 1 where id = (select max(id) from t);
    else
      insert into u(acct, amount) values (1, i); insert into u(acct, amount) values (1, i); update u set amount = amount + 1 where id = (select max(id) from u);
    end if;
    commit;
  end loop;
end $$;
