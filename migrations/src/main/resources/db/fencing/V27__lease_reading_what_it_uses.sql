-- The lease with less executor set-up per acquire+release (issue 14). Nothing is decided
-- differently from V26 (try_acquire) and V20 (release): same rows read and written, same locks,
-- same errors. Counted with callgrind on one backend (docs/benchmark/lease-cpu-callgrind.sh): of
-- V26's ~1,173k instructions per acquire+release, ~290k set up executors (ExecutorStart) for the
-- 11 statements run inside the functions, and their cost grows with the columns each one
-- projects; statements merged without fewer columns or scans saved nothing (the issuance's three
-- writes as one statement with two data-modifying WITH queries: -0.3%, left out). What changed:
--
-- 1. try_acquire reads the columns it uses, not whole rows: the resource's id, issuer, key space,
--    max_seen and last_issued (of 12 columns), and the lease's resource_id, holder and expiry (of
--    6), into the same record variables; the lease UPDATE returns the holder and expiry only. The
--    whole resource row is read only for require_local's ZF004 (a resource's name and issuer never
--    change after it is created, so that read finds what the first one did).
-- 2. try_acquire tests its four argument checks as one condition; only when it holds does it test
--    them one by one, in V26's order, and raise the same error (each condition is never NULL).
-- 3. release() of the holder's own lease queues its notification in the UPDATE's RETURNING, once
--    for the one row the UPDATE changes (resource_id is the lease's key), not in a PERFORM of its
--    own; nothing is queued when no row changes, as before.
-- Instructions per acquire+release: 1,173k -> 1,128k.

-- try_acquire: V26's, reading the columns it uses and checking its arguments in one condition
-- first (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.try_acquire(p_resource text, p_holder text, p_ttl interval,
                                                               p_handover_timeout interval DEFAULT '5 seconds')
    RETURNS TABLE (acquired boolean, token bigint, holder text, expires_at timestamptz)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    l ${flyway:defaultSchema}.lease;
    v_token bigint;
    v_lock_timeout text;
    v_deadline timestamptz;
    v_space integer;
    v_handed_over boolean := false;
BEGIN
    -- The four argument checks of V26 as one condition, evaluated on every call; only when it
    -- holds are they tested one by one, in V26's order, to raise the same error.
    IF p_resource IS NULL OR p_resource = '' OR length(p_resource) > 200
       OR p_resource !~ '^[A-Za-z0-9_.:/@+=#-]*$'
       OR p_holder IS NULL OR p_holder = '' OR length(p_holder) > 200 OR p_holder ~ '[[:cntrl:]]'
       OR p_ttl IS NULL OR p_ttl < interval '1 millisecond' OR p_ttl > interval '7 days'
       OR extract(month FROM p_ttl) <> 0 OR extract(year FROM p_ttl) <> 0
       OR p_handover_timeout IS NULL OR p_handover_timeout < interval '1 millisecond'
       OR p_handover_timeout > interval '1 hour'
       OR extract(month FROM p_handover_timeout) <> 0 OR extract(year FROM p_handover_timeout) <> 0 THEN
        -- validate_resource_name's checks, in line (it raises their errors)
        IF p_resource IS NULL OR p_resource = '' OR length(p_resource) > 200
           OR p_resource !~ '^[A-Za-z0-9_.:/@+=#-]*$' THEN
            PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
        END IF;
        IF p_holder IS NULL OR p_holder = '' OR length(p_holder) > 200 OR p_holder ~ '[[:cntrl:]]' THEN
            PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
                'holder must be 1 to 200 characters without control characters',
                jsonb_build_object('argument', 'holder', 'value', left(p_holder, 200)));
        END IF;
        -- validate_interval's checks (V23: no months or years), in line (same messages: it raises them)
        IF p_ttl IS NULL OR p_ttl < interval '1 millisecond' OR p_ttl > interval '7 days'
           OR extract(month FROM p_ttl) <> 0 OR extract(year FROM p_ttl) <> 0 THEN
            PERFORM ${flyway:defaultSchema}.validate_interval('ttl', p_ttl, interval '1 millisecond', interval '7 days');
        END IF;
        IF p_handover_timeout IS NULL OR p_handover_timeout < interval '1 millisecond'
           OR p_handover_timeout > interval '1 hour'
           OR extract(month FROM p_handover_timeout) <> 0 OR extract(year FROM p_handover_timeout) <> 0 THEN
            PERFORM ${flyway:defaultSchema}.validate_interval('handover_timeout', p_handover_timeout,
                                                              interval '1 millisecond', interval '1 hour');
        END IF;
    END IF;

    -- Look before inserting: INSERT ... ON CONFLICT waits for any open transaction that updated
    -- the existing row (an acquisition in progress), and try_acquire must not wait for the lease.
    SELECT s.id, s.issuer, s.lock_space, s.max_seen, s.last_issued
      INTO r.id, r.issuer, r.lock_space, r.max_seen, r.last_issued
      FROM ${flyway:defaultSchema}.resource s WHERE s.name = p_resource;
    IF NOT FOUND THEN
        INSERT INTO ${flyway:defaultSchema}.resource (name, issuer) VALUES (p_resource, 'local')
        ON CONFLICT (name) DO NOTHING;
        SELECT s.id, s.issuer, s.lock_space, s.max_seen, s.last_issued
          INTO r.id, r.issuer, r.lock_space, r.max_seen, r.last_issued
          FROM ${flyway:defaultSchema}.resource s WHERE s.name = p_resource;
    END IF;
    IF r.issuer <> 'local' THEN
        -- the whole row for require_local's message (a resource's name and issuer never change)
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id;
        PERFORM ${flyway:defaultSchema}.require_local(r); -- raises its ZF004
    END IF;

    -- The lease row lock orders acquirers; another acquisition in progress is contention. The
    -- lease row is looked for only when none was locked: created if missing, then locked.
    SELECT e.resource_id, e.holder, e.expires_at INTO l.resource_id, l.holder, l.expires_at
      FROM ${flyway:defaultSchema}.lease e WHERE e.resource_id = r.id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        IF NOT EXISTS (SELECT FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id) THEN
            INSERT INTO ${flyway:defaultSchema}.lease (resource_id) VALUES (r.id) ON CONFLICT DO NOTHING;
            SELECT e.resource_id, e.holder, e.expires_at INTO l.resource_id, l.holder, l.expires_at
              FROM ${flyway:defaultSchema}.lease e WHERE e.resource_id = r.id FOR UPDATE SKIP LOCKED;
        END IF;
        IF l.resource_id IS NULL THEN
            RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::timestamptz;
            RETURN;
        END IF;
    END IF;
    IF l.holder IS NOT NULL AND l.expires_at > clock_timestamp() THEN
        RETURN QUERY SELECT false, NULL::bigint, l.holder, l.expires_at;
        RETURN;
    END IF;

    -- Handover without waiting (see the head): the locks V12's handover takes, when both are free.
    v_space := r.lock_space;
    IF pg_try_advisory_xact_lock(v_space, ${flyway:defaultSchema}.advisory_key(r.id)) THEN
        SELECT s.lock_space, s.max_seen, s.last_issued INTO r.lock_space, r.max_seen, r.last_issued
          FROM ${flyway:defaultSchema}.resource s WHERE s.id = r.id FOR NO KEY UPDATE SKIP LOCKED;
        v_handed_over := FOUND AND r.lock_space = v_space;
        IF NOT FOUND THEN
            SELECT s.lock_space, s.max_seen, s.last_issued INTO r.lock_space, r.max_seen, r.last_issued
              FROM ${flyway:defaultSchema}.resource s WHERE s.id = l.resource_id;
        END IF;
    END IF;

    IF NOT v_handed_over THEN
        -- Handover (V10): wait for the fenced transactions of earlier tokens to end: the advisory
        -- share lockers (READ COMMITTED), then the FOR SHARE row lockers (REPEATABLE READ,
        -- SERIALIZABLE).
        v_lock_timeout := current_setting('lock_timeout');
        v_deadline := clock_timestamp() + p_handover_timeout;
        PERFORM set_config('lock_timeout', (extract(epoch FROM p_handover_timeout) * 1000)::bigint || 'ms', true);
        BEGIN
            v_space := r.lock_space;
            PERFORM ${flyway:defaultSchema}.lock_for_advance(r.id, v_space);
            PERFORM set_config('lock_timeout',
                               greatest(1, ceil(extract(epoch FROM v_deadline - clock_timestamp()) * 1000))::bigint || 'ms',
                               true);
            SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE;
            IF r.lock_space <> v_space THEN -- the key space changed meanwhile: wait on the new key too
                PERFORM ${flyway:defaultSchema}.lock_for_advance(r.id, r.lock_space);
            END IF;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM ${flyway:defaultSchema}.raise_error('ZF007',
                format('handover of "%s" timed out after %s: transactions fenced by token %s are still open',
                       p_resource, p_handover_timeout, r.max_seen),
                jsonb_build_object('resource', p_resource, 'max_seen', r.max_seen),
                'retry later, or end the previous holder''s transactions');
        END;
        PERFORM set_config('lock_timeout', v_lock_timeout, true);
    END IF;

    -- Issue only under the lease row lock, above what the resource has seen (V12: issue_token).
    v_token := ${flyway:defaultSchema}.issue_token(greatest(r.max_seen, r.last_issued));

    UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()
     WHERE id = r.id;
    UPDATE ${flyway:defaultSchema}.lease e
       SET holder = p_holder, token = v_token, acquired_at = clock_timestamp(),
           expires_at = clock_timestamp() + p_ttl, released_at = NULL
     WHERE e.resource_id = r.id
    RETURNING e.holder, e.expires_at INTO l.holder, l.expires_at;
    INSERT INTO ${flyway:defaultSchema}.issuance (token, resource_id, holder, ttl) VALUES (v_token, r.id, p_holder, p_ttl);

    -- A token is issued only when this commit is durable (hazard 1: nextval alone is not flushed).
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    acquired := true;
    token := v_token;
    holder := l.holder;
    expires_at := l.expires_at;
    RETURN NEXT;
END
$$;

-- release: V20's, its notification queued by the UPDATE that releases (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.release(p_resource text, p_token bigint)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l ${flyway:defaultSchema}.lease;
    v_notified text;
BEGIN
    -- The holder releasing its own lease: one statement (V20). pg_notify returns void, which
    -- casts to text as ''; the variable only receives it.
    UPDATE ${flyway:defaultSchema}.lease e
       SET holder = NULL, released_at = clock_timestamp(), expires_at = least(e.expires_at, clock_timestamp())
     WHERE e.resource_id = (SELECT s.id FROM ${flyway:defaultSchema}.resource s
                             WHERE s.name = p_resource AND s.issuer = 'local')
       AND e.token = p_token AND e.holder IS NOT NULL
    RETURNING pg_notify('fencing_lease_released', p_resource)::text INTO v_notified;
    IF FOUND THEN
        RETURN true;
    END IF;
    -- V2's release
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
