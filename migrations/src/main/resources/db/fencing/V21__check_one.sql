-- check_one(resource, token): the check of one resource with plain arguments (issue 13, the
-- per-transaction cost). fencing-jdbc checks one bound token in almost every transaction, carried
-- with its first write; it called check_tokens with two one-element arrays. Measured with callgrind
-- on the backend (docs/ARCHITECTURE.md, "The carried check's server CPU"), the arrays cost about
-- 40,000 of the carried check's 160,000 instructions per transaction: two array literals parsed at
-- Bind, and the one-resource branch of check_tokens (array_length, array_ndims, array_lower and two
-- subscripts), whose PL/pgSQL expressions are built again in every transaction.
--
-- check_one decides exactly as check_token does: its body is check_token's, read from the catalog
-- here (the fast path is written once, in V15), with two differences only in what it returns:
-- 0 where check_token accepts on the fast path, and fence()'s "advanced" (0 or 1) where check_token
-- calls fence(). That is check_tokens' result for one resource, which the client counts. The
-- migration fails if check_token's body is not the one it expects, rather than guess.
DO $migration$
DECLARE
    v_src text := (SELECT p.prosrc FROM pg_catalog.pg_proc p
                    WHERE p.oid = '${flyway:defaultSchema}.check_token(text, bigint)'::pg_catalog.regprocedure);
    v_tail constant text := 'PERFORM ${flyway:defaultSchema}.fence(p_resource, p_token);' || chr(10)
                            || '    RETURN p_token;';
    v_body text;
BEGIN
    IF v_src IS NULL
       OR (length(v_src) - length(replace(v_src, v_tail, ''))) / length(v_tail) <> 1
       OR (length(v_src) - length(replace(v_src, 'RETURN p_token;', ''))) / length('RETURN p_token;') <> 2 THEN
        RAISE EXCEPTION 'V21: check_token''s body is not the one this migration derives check_one from';
    END IF;
    v_body := replace(replace(v_src, v_tail, 'RETURN ${flyway:defaultSchema}.fence(p_resource, p_token)::integer;'),
                      'RETURN p_token;', 'RETURN 0;');
    EXECUTE pg_catalog.format($create$
CREATE FUNCTION ${flyway:defaultSchema}.check_one(p_resource text, p_token bigint)
    RETURNS integer -- how many resources this call advanced: 0 or 1, as check_tokens
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS %L
$create$, v_body);
END
$migration$;

ALTER FUNCTION ${flyway:defaultSchema}.check_one(text, bigint) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.check_one(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${flyway:defaultSchema}.check_one(text, bigint) TO "${app_role}";
