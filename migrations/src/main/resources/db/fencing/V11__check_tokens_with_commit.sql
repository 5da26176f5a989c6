-- The JDBC carry checks the bound tokens together with COMMIT, whatever the transaction ran:
-- fencing-jdbc sends "SELECT check_tokens_if_written(resources, tokens); COMMIT" in one round
-- trip. PostgreSQL knows whether the transaction wrote — it has a transaction id once it wrote a
-- row, a large object, a sequence-free catalog entry or took a row lock, however the write was
-- hidden (a view over a writing function, an operator, an overloaded built-in name, a rule, a
-- trigger of an unprotected table writing elsewhere, CALL, prepared EXECUTE, an updatable result
-- set, the fastpath and large object APIs) — so a read-only transaction pays no check, and no
-- classification of SQL text is needed for safety. A write to a temporary table also assigns a
-- transaction id: it costs a check, never safety. nextval() assigns none and is not transactional:
-- sequences stay outside the fence.
--
-- Checking at commit is as safe as checking before the first write: the check's share lock is held
-- until the COMMIT right behind it, a refused transaction rolls back, and nothing of an uncommitted
-- transaction is visible to anyone. Under REPEATABLE READ / SERIALIZABLE a token superseded after
-- the snapshot is refused (or the transaction fails with 40001), never accepted.

CREATE FUNCTION ${flyway:defaultSchema}.check_tokens_if_written(p_resources text[], p_tokens bigint[])
    RETURNS integer -- NULL when the transaction wrote nothing (no check); else as check_tokens
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_current_xact_id_if_assigned() IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN ${flyway:defaultSchema}.check_tokens(p_resources, p_tokens);
END
$$;

ALTER FUNCTION ${flyway:defaultSchema}.check_tokens_if_written(text[], bigint[]) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.check_tokens_if_written(text[], bigint[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${flyway:defaultSchema}.check_tokens_if_written(text[], bigint[]) TO "${app_role}";
