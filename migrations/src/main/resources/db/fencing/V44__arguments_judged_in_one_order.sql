-- Leftovers of the SQL API, found by calling its functions directly with odd arguments (as the
-- application role may). Every accepting path is the one in place; what changes is which error a
-- bad call gets, and that a malformed call is refused whatever the transaction did.
--
-- 1. renew and release judged the token before the resource. A NULL token for an external resource
--    (tokens from ZooKeeper, etcd: no lease here) got ZF002 "missing fencing token", hint "present
--    the token its issuer ... gave the current lock holder", and presenting one got ZF004 "is
--    fenced by external tokens; it has no lease here": advice that led to another refusal. A NULL
--    token for an unknown resource got ZF002 "acquire a lease" (and a receipt for a resource that
--    does not exist), where any token got ZF004 "unknown fencing resource". lock_own_lease (renew,
--    and release after its one-statement path found nothing) now looks the resource up and
--    requires a local one first, then validates the token: the same ZF004 whatever the token.
--    A local resource's NULL token is ZF002 as before (B67). (BadInputSqlTest B140.)
-- 2. validate_token (check_token, check_one, check_tokens, carry, and renew / release behind 1)
--    named a NULL, empty or malformed resource in a token error: check_token(NULL, NULL) was ZF002
--    'missing fencing token for resource ""', check_token('', NULL) the same with a receipt for
--    the empty name, check_token('a b', 0) ZF006 with a receipt-less DETAIL naming 'a b', where
--    any positive token got ZF004 "resource name is null" / "is empty" / "contains the character".
--    On its error paths only (a NULL or non-positive token), it now validates the name first, so
--    the name's ZF004 comes first whatever the token. A positive token returns after one test (it
--    took two: IS NULL, then <= 0); the fast paths do not call it at all.
--    (BadInputSqlTest B142.)
-- 3. check_tokens_if_written returned NULL, nothing checked, for a transaction that wrote nothing,
--    before it looked at its arguments: NULL arrays, arrays of different lengths, two-dimensional
--    ones or more than 1000 entries were accepted silently there, and refused (ZF006, check_tokens'
--    message) once the transaction had written. Now a malformed call is refused in both cases.
--    The early return's one test (V37's) now also requires arrays check_tokens accepts; anything
--    else goes on to check_tokens, which refuses it. The read-only path pays five function calls
--    on the arrays inside the test it already evaluated (no PL/pgSQL expression of its own):
--    measured +1.3 us of backend CPU per call, 7.1 -> 8.4 us (ARCHITECTURE, V44). A transaction
--    that wrote skips them (AND after the transaction id). fencing-jdbc now sends this test itself
--    (CheckLiteral.WRITTEN) and calls no function on a read-only commit: earlier clients pay it. The contents (a NULL
--    token, a malformed name) are still judged only when the transaction wrote: those are
--    refusals of a write, and there was none. The body is derived from the one in place (its fast
--    path carries the advisory key space that set_advisory_key_space chose, V34), V37's test found
--    exactly once. (BadInputSqlTest B141, B143.)

-- 1. ------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.lock_own_lease(p_resource text, p_token bigint)
    RETURNS ${flyway:defaultSchema}.lease
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    l ${flyway:defaultSchema}.lease;
BEGIN
    -- the resource first: an unknown or external one is ZF004 whatever the token
    r := ${flyway:defaultSchema}.find_resource(p_resource);
    PERFORM ${flyway:defaultSchema}.require_local(r);
    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    SELECT * INTO l FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id FOR UPDATE;
    IF NOT FOUND OR p_token <> l.token THEN
        -- judged against the lease's token: a lease taken over means stale, beyond it never issued
        r.max_seen := coalesce(l.token, 0);
        r.last_issued := coalesce(l.token, 0);
        r.strict_mode := false;
        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);
    END IF;
    RETURN l;
END
$$;

-- 2. ------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.validate_token(p_resource text, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_token > 0 THEN
        RETURN; -- a valid token: one test (it was two)
    END IF;
    -- an error path: the resource's name is judged first (ZF004 whatever the token)
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    IF p_token IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('missing fencing token for resource "%s"', p_resource),
            jsonb_build_object('resource', p_resource, 'token', NULL),
            CASE WHEN EXISTS (SELECT FROM ${flyway:defaultSchema}.resource r
                               WHERE r.name = p_resource AND r.issuer = 'external')
                 THEN 'this resource is fenced by external tokens (it has no lease here): present the token its issuer (ZooKeeper, etcd) gave the current lock holder'
                 ELSE 'acquire a lease and present its token' END);
    END IF;
    PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
        format('fencing token must be positive, was %s', p_token),
        jsonb_build_object('resource', p_resource, 'token', p_token));
END
$$;

-- 3. ------------------------------------------------------------------------------------------
DO $migration$
DECLARE
    v_oid pg_catalog.oid := '${flyway:defaultSchema}.check_tokens_if_written(text[],bigint[])'::pg_catalog.regprocedure;
    v_old text := 'IF pg_current_xact_id_if_assigned() IS NULL AND NOT EXISTS';
    -- what check_tokens accepts (V5): two one-dimensional arrays of one length, at most 1000
    -- entries; two empty arrays too. Anything else goes on to check_tokens, which refuses it. In
    -- the one test the early return already makes (no expression of its own), after the
    -- transaction id: a transaction that wrote skips it.
    v_new text := 'IF pg_current_xact_id_if_assigned() IS NULL'
                  ' AND cardinality(p_resources) = cardinality(p_tokens) AND cardinality(p_resources) <= 1000'
                  ' AND coalesce(array_ndims(p_resources), 1) = 1 AND coalesce(array_ndims(p_tokens), 1) = 1'
                  ' AND NOT EXISTS';
    v_src text;
    v_def text;
BEGIN
    v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
    v_def := pg_catalog.pg_get_functiondef(v_oid);
    IF (length(v_src) - length(replace(v_src, v_old, ''))) / length(v_old) <> 1
       OR (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
        RAISE EXCEPTION 'V44: check_tokens_if_written''s body is not the one this migration derives its new body from';
    END IF;
    -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
    -- (pg_catalog, pg_temp: cardinality and array_ndims are pg_catalog's)
    EXECUTE replace(v_def, v_src, replace(v_src, v_old, v_new));
END
$migration$;
