-- The accept path of the fence, made cheap (issue 6: the benchmark measured check_tokens at 4 to 6
-- single-row UPDATEs of server time, most of it spent in seven nested PL/pgSQL calls that each
-- switched search_path, and in a lookup and a locking read that could be one query).
--
-- 1. Internal helpers on the check's path no longer pin their own search_path. Each pin costs a
--    GUC save/restore and a recomputation of the namespace path on every call. They cannot be
--    called by anyone but the owner (EXECUTE is revoked from PUBLIC and never granted), and the
--    SECURITY DEFINER API functions and trigger functions that call them pin
--    search_path = pg_catalog, pg_temp, which is therefore the path they run under. Every name in
--    their bodies is schema-qualified. PrivilegesTest holds this list and these grants.
--
-- 2. fence() accepts the common case with one query: under READ COMMITTED, the token equal to
--    max_seen of a non-strict resource is locked FOR SHARE and accepted at once. The row is
--    re-checked by PostgreSQL after a concurrent update (EvalPlanQual), so a token superseded
--    meanwhile matches no row and falls through to the full path below, which gives the exact
--    error. Nothing is decided differently: the full path is V2's, unchanged, and accepts exactly
--    the same (token = max_seen under a FOR SHARE lock); only the order of the work changes.
--    REPEATABLE READ and SERIALIZABLE take the full path (a locking read of a row updated after
--    the snapshot raises 40001 there, which the full path turns into ZF001).
--
-- CREATE OR REPLACE keeps owners and grants: fence() stays callable by nobody but its owner.
--
-- 3. check_tokens() with one entry (every transaction that binds one resource) calls fence()
--    directly instead of sorting a one-row unnest.

ALTER FUNCTION ${flyway:defaultSchema}.validate_resource_name(text) RESET search_path;
ALTER FUNCTION ${flyway:defaultSchema}.validate_token(text, bigint) RESET search_path;
ALTER FUNCTION ${flyway:defaultSchema}.find_resource(text) RESET search_path;
ALTER FUNCTION ${flyway:defaultSchema}.marker_mac(bigint, bigint) RESET search_path;
ALTER FUNCTION ${flyway:defaultSchema}.mark_checked(bigint, bigint) RESET search_path;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    -- The common case in one query (see the head of this migration).
    IF current_setting('transaction_isolation') = 'read committed' THEN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource
         WHERE name = p_resource AND max_seen = p_token AND NOT strict_mode
           FOR SHARE;
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN false;
        END IF;
    END IF;

    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    r := ${flyway:defaultSchema}.find_resource(p_resource);

    IF r.strict_mode THEN
        UPDATE ${flyway:defaultSchema}.resource
           SET max_seen = p_token, last_used = p_token, last_used_xid = pg_current_xact_id(), updated_at = now()
         WHERE id = r.id AND max_seen <= p_token AND last_used < p_token
           AND (issuer = 'external' OR p_token <= last_issued);
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN p_token > r.max_seen;
        END IF;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
        IF r.last_used = p_token AND r.last_used_xid = pg_current_xact_id() THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN false; -- this transaction already used it
        END IF;
        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);
        RAISE EXCEPTION 'fencing: strict check of % on "%" fell through', p_token, r.name; -- unreachable
    END IF;

    IF r.issuer = 'external' AND p_token > r.max_seen THEN
        -- The row lock of the UPDATE holds off later advancers until this transaction ends.
        UPDATE ${flyway:defaultSchema}.resource SET max_seen = p_token, updated_at = now()
         WHERE id = r.id AND max_seen < p_token;
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN true;
        END IF;
        -- a concurrent transaction advanced it first: judge against the new value below
    END IF;

    -- The locking read runs only when no UPDATE above matched: never FOR SHARE followed by UPDATE.
    IF current_setting('transaction_isolation') = 'read committed' THEN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
    ELSE
        -- Under REPEATABLE READ / SERIALIZABLE a row updated after the snapshot cannot be locked
        -- (40001). Every such update raised max_seen, so a token not above the snapshot's max_seen
        -- is certainly stale: say so, rather than invite a retry. (A subtransaction, so only here.)
        BEGIN
            SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
        EXCEPTION WHEN serialization_failure THEN
            IF p_token <= r.max_seen THEN
                PERFORM ${flyway:defaultSchema}.raise_error('ZF001',
                    format('stale fencing token %s for resource "%s": a newer token was issued after this transaction began',
                           p_token, r.name),
                    jsonb_build_object('resource', r.name, 'token', p_token, 'max_seen', NULL, 'reason', 'stale_token'),
                    'this client no longer holds the lease; do not retry the transaction');
            END IF;
            RAISE;
        END;
    END IF;
    IF p_token <> r.max_seen THEN
        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);
        RAISE EXCEPTION 'fencing: check of % on "%" fell through', p_token, r.name; -- unreachable
    END IF;
    PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
    RETURN false;
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_tokens(p_resources text[], p_tokens bigint[])
    RETURNS integer -- how many resources this call advanced
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pair record;
    advanced integer := 0;
    v_resources integer := coalesce(array_length(p_resources, 1), 0);
    v_tokens integer := coalesce(array_length(p_tokens, 1), 0);
BEGIN
    IF p_resources IS NULL OR p_tokens IS NULL OR v_resources <> v_tokens
       OR array_ndims(p_resources) > 1 OR array_ndims(p_tokens) > 1 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('check_tokens takes two one-dimensional arrays of the same length: resources and their tokens, was %s and %s',
                   CASE WHEN p_resources IS NULL THEN 'null' ELSE v_resources || ' resources' END,
                   CASE WHEN p_tokens IS NULL THEN 'null' ELSE v_tokens || ' tokens' END),
            jsonb_build_object('argument', 'resources', 'resources', v_resources, 'tokens', v_tokens));
    END IF;
    IF v_resources > 1000 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('check_tokens takes at most 1000 resources, was %s', v_resources),
            jsonb_build_object('argument', 'resources', 'resources', v_resources, 'tokens', v_tokens));
    END IF;
    IF v_resources = 1 THEN
        -- one resource: nothing to order
        RETURN ${flyway:defaultSchema}.fence(p_resources[array_lower(p_resources, 1)],
                                              p_tokens[array_lower(p_tokens, 1)])::integer;
    END IF;
    FOR pair IN SELECT r, t FROM unnest(p_resources, p_tokens) AS u(r, t) ORDER BY r COLLATE "C", t
    LOOP
        IF ${flyway:defaultSchema}.fence(pair.r, pair.t) THEN
            advanced := advanced + 1;
        END IF;
    END LOOP;
    RETURN advanced;
END
$$;
