-- The fence's SQL API: the only way to touch the tables of V1.
--
-- Every API function is SECURITY DEFINER, owned by ${owner_role}, with a pinned search_path and
-- schema-qualified names; EXECUTE is revoked from PUBLIC and granted to ${app_role}.
--
-- Errors (SQLSTATE class ZF, our own; DETAIL carries a JSON object for programs):
--   ZF001 stale token          a newer token exists for the resource (or, strict, the token was used)
--   ZF002 missing token        NULL token
--   ZF003 token never issued   greater than any token this database issued for the resource
--   ZF004 invalid resource     malformed name, unknown resource, or the wrong kind of resource
--   ZF005 lease not held       renewing a released or expired lease
--   ZF006 invalid argument     token <= 0, bad holder, ttl or timeout
--   ZF007 handover timeout     the previous holder's fenced transactions did not end in time

-- ---------------------------------------------------------------------------------------------
-- Internal helpers (not granted to anyone; called by the SECURITY DEFINER functions below)
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ${flyway:defaultSchema}.raise_error(code text, message text, detail jsonb, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text;
    END IF;
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = detail::text, HINT = hint;
END
$$;

CREATE FUNCTION ${flyway:defaultSchema}.validate_resource_name(p_resource text)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad int;
BEGIN
    IF p_resource IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004', 'resource name is null',
            jsonb_build_object('resource', NULL));
    ELSIF p_resource = '' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004', 'resource name is empty',
            jsonb_build_object('resource', p_resource));
    ELSIF length(p_resource) > 200 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource name is %s characters long; the limit is 200', length(p_resource)),
            jsonb_build_object('resource', left(p_resource, 200)));
    END IF;
    bad := length(substring(p_resource FROM '^[A-Za-z0-9_.:/@+=#-]*')) + 1;
    IF bad <= length(p_resource) THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource name contains %s at position %s; allowed are letters, digits and _ . : / @ + = # -',
                   CASE WHEN substr(p_resource, bad, 1) ~ '[[:cntrl:]]'
                        THEN 'a control character (code ' || ascii(substr(p_resource, bad, 1)) || ')'
                        ELSE 'the character "' || substr(p_resource, bad, 1) || '"' END,
                   bad),
            jsonb_build_object('resource', p_resource));
    END IF;
END
$$;

CREATE FUNCTION ${flyway:defaultSchema}.validate_token(p_resource text, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_token IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('missing fencing token for resource "%s"', p_resource),
            jsonb_build_object('resource', p_resource, 'token', NULL),
            'acquire a lease and present its token');
    ELSIF p_token <= 0 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('fencing token must be positive, was %s', p_token),
            jsonb_build_object('resource', p_resource, 'token', p_token));
    END IF;
END
$$;

CREATE FUNCTION ${flyway:defaultSchema}.validate_interval(p_name text, p_value interval, p_min interval, p_max interval)
    RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_value IS NULL OR p_value < p_min OR p_value > p_max THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('%s must be between %s and %s, was %s', p_name, p_min, p_max, coalesce(p_value::text, 'null')),
            jsonb_build_object('argument', p_name, 'value', p_value::text));
    END IF;
END
$$;

-- Looks a resource up (no lock), failing with ZF004 when it does not exist.
CREATE FUNCTION ${flyway:defaultSchema}.find_resource(p_resource text)
    RETURNS ${flyway:defaultSchema}.resource
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('unknown fencing resource "%s"', p_resource),
            jsonb_build_object('resource', p_resource),
            'a resource exists once a lease on it was acquired, or after create_resource()');
    END IF;
    RETURN r;
END
$$;

-- Raises ZF004 for a resource whose tokens come from elsewhere: it has no lease here.
CREATE FUNCTION ${flyway:defaultSchema}.require_local(r ${flyway:defaultSchema}.resource)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF r.issuer <> 'local' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource "%s" is fenced by external tokens; it has no lease here', r.name),
            jsonb_build_object('resource', r.name, 'issuer', r.issuer));
    END IF;
END
$$;

-- Raises the error for a token the resource refuses. r must be a locked (or just-updated) view.
CREATE FUNCTION ${flyway:defaultSchema}.refuse(r ${flyway:defaultSchema}.resource, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    detail jsonb := jsonb_build_object('resource', r.name, 'token', p_token, 'max_seen', r.max_seen,
                                       'last_issued', CASE WHEN r.issuer = 'local' THEN r.last_issued END);
BEGIN
    IF p_token < r.max_seen THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF001',
            format('stale fencing token %s for resource "%s": a newer token %s exists', p_token, r.name, r.max_seen),
            detail || jsonb_build_object('reason', 'stale_token'),
            'this client no longer holds the lease; do not retry the transaction');
    ELSIF r.issuer = 'local' AND p_token > r.last_issued THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF003',
            format('fencing token %s for resource "%s" was never issued (last issued: %s)', p_token, r.name, r.last_issued),
            detail || jsonb_build_object('reason', 'never_issued'));
    ELSIF r.strict_mode AND p_token <= r.last_used THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF001',
            format('fencing token %s for strict resource "%s" was already used by a committed transaction', p_token, r.name),
            detail || jsonb_build_object('reason', 'token_used'),
            'strict resources admit one write transaction per token; acquire a new lease');
    END IF;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Markers of passed checks (internal): what protected tables (V3) look for
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ${flyway:defaultSchema}.marker_mac(p_resource_id bigint, p_token bigint)
    RETURNS text
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT left(encode(sha256(convert_to(s.secret || ':' || pg_current_xact_id() || ':' || p_resource_id
                                          || ':' || p_token, 'UTF8')), 'hex'), 32)
      FROM ${flyway:defaultSchema}.marker_secret s
$$;

-- Records in fencing.checked that this transaction passed the check of p_token on the resource.
CREATE FUNCTION ${flyway:defaultSchema}.mark_checked(p_resource_id bigint, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_checked text := coalesce(current_setting('fencing.checked', true), '');
    v_entry text := p_resource_id || ':' || p_token || ':'
                    || ${flyway:defaultSchema}.marker_mac(p_resource_id, p_token);
BEGIN
    IF position(',' || v_entry || ',' IN ',' || v_checked) = 0 THEN
        PERFORM set_config('fencing.checked', v_checked || v_entry || ',', true);
    END IF;
END
$$;

-- true when fencing.checked holds a marker of this transaction for the resource with a valid MAC.
CREATE FUNCTION ${flyway:defaultSchema}.is_checked(p_resource_id bigint)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_checked text := current_setting('fencing.checked', true);
    v_prefix text := p_resource_id || ':';
    v_pos int;
    v_entry text;
    v_parts text[];
BEGIN
    IF v_checked IS NULL OR v_checked = '' THEN
        RETURN false; -- never set, or set by a transaction that has ended
    END IF;
    v_pos := position(',' || v_prefix IN ',' || v_checked);
    IF v_pos = 0 THEN
        RETURN false;
    END IF;
    -- fast path: the first entry for the resource (normally the only one)
    v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
    IF array_length(v_parts, 1) = 3 AND v_parts[2] ~ '^[0-9]{1,19}$'
       AND v_parts[3] = ${flyway:defaultSchema}.marker_mac(p_resource_id, v_parts[2]::bigint) THEN
        RETURN true;
    END IF;
    -- a forged or foreign entry came first: look at every entry
    FOREACH v_entry IN ARRAY string_to_array(v_checked, ',') LOOP
        v_parts := string_to_array(v_entry, ':');
        IF array_length(v_parts, 1) = 3 AND v_parts[1] = p_resource_id::text AND v_parts[2] ~ '^[0-9]{1,19}$'
           AND v_parts[3] = ${flyway:defaultSchema}.marker_mac(p_resource_id, v_parts[2]::bigint) THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Compare
-- ---------------------------------------------------------------------------------------------

-- fence(resource, token), behind check_token and check_tokens: call inside the writer's
-- transaction, before its writes.
--   token < max_seen  -> ZF001 stale          token = max_seen -> accepted
--   token > max_seen  -> advance (external resources; never issued for local ones: ZF003)
-- An accepted check keeps a row lock on the resource until the transaction ends, so no newer token
-- can be issued or accepted meanwhile; same-token writers share it (FOR SHARE) and run concurrently.
-- A ROLLBACK TO SAVEPOINT that undoes the check releases the lock: check again after it.
-- A passed check leaves a marker (mark_checked) that protected tables (V3) look for.
-- Strict resources: each token admits exactly one write transaction (the row is updated instead).
CREATE FUNCTION ${flyway:defaultSchema}.fence(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
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

-- check_token(resource, token): the fence for one resource; returns the token.
CREATE FUNCTION ${flyway:defaultSchema}.check_token(p_resource text, p_token bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ${flyway:defaultSchema}.fence(p_resource, p_token);
    RETURN p_token;
END
$$;

-- check_tokens(resources, tokens): check_token for several resources at once, in one round trip,
-- always in the order of the resource names, so two writers never deadlock on the fence.
CREATE FUNCTION ${flyway:defaultSchema}.check_tokens(p_resources text[], p_tokens bigint[])
    RETURNS integer -- how many resources this call advanced
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pair record;
    advanced integer := 0;
BEGIN
    IF p_resources IS NULL OR p_tokens IS NULL
       OR coalesce(array_length(p_resources, 1), 0) <> coalesce(array_length(p_tokens, 1), 0) THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            'check_tokens takes two arrays of the same length: resources and their tokens',
            jsonb_build_object('resources', p_resources, 'tokens', p_tokens));
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

-- Records a refusal after the refused transaction rolled back. The facts (max_seen, holder) are
-- read here, not taken from the caller. Returns the rejection id.
CREATE FUNCTION ${flyway:defaultSchema}.record_rejection(p_resource text, p_token bigint, p_sqlstate text)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    v_reason text;
    v_holder text;
    v_id bigint;
BEGIN
    v_reason := CASE p_sqlstate
        WHEN 'ZF001' THEN 'stale_token'
        WHEN 'ZF002' THEN 'missing_token'
        WHEN 'ZF003' THEN 'never_issued'
        WHEN 'ZF004' THEN 'invalid_resource'
    END;
    IF v_reason IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('record_rejection takes a refusal SQLSTATE (ZF001..ZF004), not %s', coalesce(p_sqlstate, 'null')),
            jsonb_build_object('argument', 'sqlstate', 'value', p_sqlstate));
    END IF;
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF FOUND THEN
        IF r.strict_mode AND p_sqlstate = 'ZF001' AND p_token = r.last_used THEN
            v_reason := 'token_used';
        END IF;
        SELECT i.holder INTO v_holder FROM ${flyway:defaultSchema}.issuance i
         WHERE i.resource_id = r.id AND i.token = p_token;
    END IF;
    INSERT INTO ${flyway:defaultSchema}.rejection (resource, token, max_seen, holder, reason, sqlstate)
    VALUES (left(coalesce(p_resource, ''), 200), p_token, r.max_seen, v_holder, v_reason, p_sqlstate)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Issue
-- ---------------------------------------------------------------------------------------------

-- Creates a resource (idempotent). external: tokens come from another issuer (ZooKeeper, etcd)
-- and advance max_seen on first write. strict: one write transaction per token.
CREATE FUNCTION ${flyway:defaultSchema}.create_resource(p_resource text, p_external boolean DEFAULT false,
                                                        p_strict boolean DEFAULT false)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    v_issuer text := CASE WHEN p_external THEN 'external' ELSE 'local' END;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    IF p_external IS NULL OR p_strict IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'create_resource: external and strict must not be null',
            jsonb_build_object('resource', p_resource));
    END IF;
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        INSERT INTO ${flyway:defaultSchema}.resource (name, issuer, strict_mode)
        VALUES (p_resource, v_issuer, p_strict)
        ON CONFLICT (name) DO NOTHING;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    END IF;
    IF r.issuer <> v_issuer OR r.strict_mode <> p_strict THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource "%s" already exists as %s%s', p_resource, r.issuer, CASE WHEN r.strict_mode THEN ', strict' ELSE '' END),
            jsonb_build_object('resource', p_resource, 'issuer', r.issuer, 'strict_mode', r.strict_mode),
            'a resource''s issuer and mode are fixed when it is created');
    END IF;
END
$$;

-- try_acquire(resource, holder, ttl, handover_timeout): takes the lease if it is free or expired
-- (database clock) and returns a token greater than every token issued for the resource; else
-- returns acquired = false with the current holder and expiry. Never waits for the lease itself;
-- waits up to handover_timeout for the previous holder's fenced transactions to end, because
-- max_seen advances here (eager fencing): the previous holder is fenced off when this commits.
-- The token counts as issued only once this transaction has committed.
CREATE FUNCTION ${flyway:defaultSchema}.try_acquire(p_resource text, p_holder text, p_ttl interval,
                                                    p_handover_timeout interval DEFAULT '5 seconds')
    RETURNS TABLE (acquired boolean, token bigint, holder text, expires_at timestamptz)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    l ${flyway:defaultSchema}.lease;
    v_token bigint;
    v_floor bigint;
    v_lock_timeout text;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    IF p_holder IS NULL OR p_holder = '' OR length(p_holder) > 200 OR p_holder ~ '[[:cntrl:]]' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            'holder must be 1 to 200 characters without control characters',
            jsonb_build_object('argument', 'holder', 'value', left(p_holder, 200)));
    END IF;
    PERFORM ${flyway:defaultSchema}.validate_interval('ttl', p_ttl, interval '1 millisecond', interval '7 days');
    PERFORM ${flyway:defaultSchema}.validate_interval('handover_timeout', p_handover_timeout,
                                                      interval '1 millisecond', interval '1 hour');

    -- Look before inserting: INSERT ... ON CONFLICT waits for any open transaction that updated
    -- the existing row (an acquisition in progress), and try_acquire must not wait for the lease.
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        INSERT INTO ${flyway:defaultSchema}.resource (name, issuer) VALUES (p_resource, 'local')
        ON CONFLICT (name) DO NOTHING;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    END IF;
    PERFORM ${flyway:defaultSchema}.require_local(r);
    IF NOT EXISTS (SELECT FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id) THEN
        INSERT INTO ${flyway:defaultSchema}.lease (resource_id) VALUES (r.id) ON CONFLICT DO NOTHING;
    END IF;

    -- The lease row lock orders acquirers; another acquisition in progress is contention.
    SELECT * INTO l FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::timestamptz;
        RETURN;
    END IF;
    IF l.holder IS NOT NULL AND l.expires_at > clock_timestamp() THEN
        RETURN QUERY SELECT false, NULL::bigint, l.holder, l.expires_at;
        RETURN;
    END IF;

    -- Handover: wait for the fenced transactions of earlier tokens (FOR SHARE lockers) to end.
    v_lock_timeout := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', (extract(epoch FROM p_handover_timeout) * 1000)::bigint || 'ms', true);
    BEGIN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE;
    EXCEPTION WHEN lock_not_available THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF007',
            format('handover of "%s" timed out after %s: transactions fenced by token %s are still open',
                   p_resource, p_handover_timeout, r.max_seen),
            jsonb_build_object('resource', p_resource, 'max_seen', r.max_seen),
            'retry later, or end the previous holder''s transactions');
    END;
    PERFORM set_config('lock_timeout', v_lock_timeout, true);

    -- nextval only under the lease row lock. Never issue at or below what the resource has seen,
    -- even if the sequence was set back (restore, failover to a lagging replica).
    v_token := nextval('${flyway:defaultSchema}.token_seq');
    v_floor := greatest(r.max_seen, r.last_issued);
    IF v_token <= v_floor THEN
        PERFORM setval('${flyway:defaultSchema}.token_seq', v_floor);
        v_token := nextval('${flyway:defaultSchema}.token_seq');
    END IF;

    UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()
     WHERE id = r.id;
    UPDATE ${flyway:defaultSchema}.lease
       SET holder = p_holder, token = v_token, acquired_at = clock_timestamp(),
           expires_at = clock_timestamp() + p_ttl, released_at = NULL
     WHERE resource_id = r.id
    RETURNING * INTO l;
    INSERT INTO ${flyway:defaultSchema}.issuance (token, resource_id, holder, ttl) VALUES (v_token, r.id, p_holder, p_ttl);

    -- A token is issued only when this commit is durable (hazard: nextval alone is not WAL-flushed).
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RETURN QUERY SELECT true, v_token, l.holder, l.expires_at;
END
$$;

-- Locks the lease row of a local resource and judges the presented token against it.
CREATE FUNCTION ${flyway:defaultSchema}.lock_own_lease(p_resource text, p_token bigint)
    RETURNS ${flyway:defaultSchema}.lease
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    l ${flyway:defaultSchema}.lease;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    r := ${flyway:defaultSchema}.find_resource(p_resource);
    PERFORM ${flyway:defaultSchema}.require_local(r);
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

-- renew(resource, token, ttl): extends the current holder's lease; returns the new expiry.
CREATE FUNCTION ${flyway:defaultSchema}.renew(p_resource text, p_token bigint, p_ttl interval)
    RETURNS timestamptz
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l ${flyway:defaultSchema}.lease;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_interval('ttl', p_ttl, interval '1 millisecond', interval '7 days');
    l := ${flyway:defaultSchema}.lock_own_lease(p_resource, p_token);
    IF l.holder IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF005',
            format('lease on "%s" with token %s was released at %s', p_resource, p_token, l.released_at),
            jsonb_build_object('resource', p_resource, 'token', p_token, 'reason', 'released'));
    ELSIF l.expires_at <= clock_timestamp() THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF005',
            format('lease on "%s" with token %s expired at %s', p_resource, p_token, l.expires_at),
            jsonb_build_object('resource', p_resource, 'token', p_token, 'reason', 'expired',
                               'expired_at', l.expires_at),
            'acquire a new lease: its token fences off anything done under this one');
    END IF;
    UPDATE ${flyway:defaultSchema}.lease SET expires_at = clock_timestamp() + p_ttl
     WHERE resource_id = l.resource_id
    RETURNING expires_at INTO l.expires_at;
    RETURN l.expires_at;
END
$$;

-- release(resource, token): frees the lease. true if this call released it, false if it was
-- already released. The token stays accepted by check_token until the next acquisition.
CREATE FUNCTION ${flyway:defaultSchema}.release(p_resource text, p_token bigint)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l ${flyway:defaultSchema}.lease;
BEGIN
    l := ${flyway:defaultSchema}.lock_own_lease(p_resource, p_token);
    IF l.holder IS NULL THEN
        RETURN false;
    END IF;
    UPDATE ${flyway:defaultSchema}.lease
       SET holder = NULL, released_at = clock_timestamp(), expires_at = least(expires_at, clock_timestamp())
     WHERE resource_id = l.resource_id;
    PERFORM pg_notify('fencing_lease_released', p_resource);
    RETURN true;
END
$$;

-- status(resource): what the fence knows about a resource, for operators and tests.
CREATE FUNCTION ${flyway:defaultSchema}.status(p_resource text)
    RETURNS TABLE (resource text, issuer text, strict_mode boolean, max_seen bigint, last_issued bigint,
                   holder text, lease_token bigint, expires_at timestamptz, lease_valid boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    r := ${flyway:defaultSchema}.find_resource(p_resource);
    RETURN QUERY
    SELECT r.name, r.issuer, r.strict_mode, r.max_seen, r.last_issued, l.holder, l.token, l.expires_at,
           coalesce(l.holder IS NOT NULL AND l.expires_at > clock_timestamp(), false)
      FROM (SELECT 1) AS one
      LEFT JOIN ${flyway:defaultSchema}.lease l ON l.resource_id = r.id;
END
$$;

-- advance_sequence(gap): operator command after failover to an async replica, restore or PITR,
-- when committed issuances may have been lost. Moves the sequence past everything recorded plus
-- gap. Not granted to the application role.
CREATE FUNCTION ${flyway:defaultSchema}.advance_sequence(p_gap bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_base bigint;
BEGIN
    IF p_gap IS NULL OR p_gap < 1 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', format('gap must be positive, was %s', p_gap),
            jsonb_build_object('argument', 'gap', 'value', p_gap));
    END IF;
    SELECT greatest(s.last_value, (SELECT coalesce(max(greatest(max_seen, last_issued)), 0)
                                     FROM ${flyway:defaultSchema}.resource))
      INTO v_base FROM ${flyway:defaultSchema}.token_seq s;
    RETURN setval('${flyway:defaultSchema}.token_seq', v_base + p_gap);
END
$$;

DO $owner$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = '${flyway:defaultSchema}'::regnamespace
                AND p.proname NOT IN ('catalog_fingerprint', 'record_catalog_fingerprint')
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', f, '${owner_role}');
    END LOOP;
END
$owner$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${flyway:defaultSchema} FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    ${flyway:defaultSchema}.check_token(text, bigint),
    ${flyway:defaultSchema}.check_tokens(text[], bigint[]),
    ${flyway:defaultSchema}.record_rejection(text, bigint, text),
    ${flyway:defaultSchema}.create_resource(text, boolean, boolean),
    ${flyway:defaultSchema}.try_acquire(text, text, interval, interval),
    ${flyway:defaultSchema}.renew(text, bigint, interval),
    ${flyway:defaultSchema}.release(text, bigint),
    ${flyway:defaultSchema}.status(text)
TO "${app_role}";
