-- The lease at the floor (issue 14): what an uncontended acquire+release costs the server.
-- Nothing is decided differently from V16; docs/ARCHITECTURE.md ("Lease operations at the floor")
-- argues it hazard by hazard. Backend CPU per acquisition in a DO loop: V16 about 175-185 µs,
-- V20 about 140; per release about 40-70 µs, V20 about 8. What was taken away:
--
-- 1. try_acquire's handover ran in an EXCEPTION block (a subtransaction) with lock_timeout set and
--    restored around it (three set_config calls), and locked the resource row FOR NO KEY UPDATE
--    inside it: the subtransaction took a transaction id of its own, and the UPDATE of the same
--    row after it, by the parent, had to leave a multixact (parent and subtransaction) as its
--    xmax: one more WAL record and a multixact per acquisition. Now the handover first tries the
--    same locks without waiting: the resource's exclusive advisory lock with
--    pg_try_advisory_xact_lock (granted at once when no accepted transaction of an earlier token
--    is open), then its row FOR NO KEY UPDATE SKIP LOCKED (no REPEATABLE READ or SERIALIZABLE
--    check holds it FOR SHARE). When both are granted nothing is there to wait for, and the
--    locks are the ones V12's handover ends up holding, taken by the transaction itself. Else
--    the V12 handover runs as before, with its timeout and ZF007 (locks already granted are held
--    again: advisory locks stack, a row lock the transaction holds is no-op to take again).
-- 2. The helpers of the acquisition that carry a SET search_path clause (validate_interval
--    twice, require_local) are inlined: each call of such a function saves, sets and restores
--    search_path (fmgr_security_definer), and a changed search_path is looked up again.
-- 3. release() of the current holder's own lease is one UPDATE that matches the resource name,
--    the token and a held lease; everything else (refusals, released already, bad input) goes
--    through V2's path unchanged.
-- The results, errors and locks held at commit are those of V16's try_acquire and V2's release.

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
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    IF p_holder IS NULL OR p_holder = '' OR length(p_holder) > 200 OR p_holder ~ '[[:cntrl:]]' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            'holder must be 1 to 200 characters without control characters',
            jsonb_build_object('argument', 'holder', 'value', left(p_holder, 200)));
    END IF;
    -- validate_interval's checks, in line (same messages: it raises them)
    IF p_ttl IS NULL OR p_ttl < interval '1 millisecond' OR p_ttl > interval '7 days' THEN
        PERFORM ${flyway:defaultSchema}.validate_interval('ttl', p_ttl, interval '1 millisecond', interval '7 days');
    END IF;
    IF p_handover_timeout IS NULL OR p_handover_timeout < interval '1 millisecond'
       OR p_handover_timeout > interval '1 hour' THEN
        PERFORM ${flyway:defaultSchema}.validate_interval('handover_timeout', p_handover_timeout,
                                                          interval '1 millisecond', interval '1 hour');
    END IF;

    -- Look before inserting: INSERT ... ON CONFLICT waits for any open transaction that updated
    -- the existing row (an acquisition in progress), and try_acquire must not wait for the lease.
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        INSERT INTO ${flyway:defaultSchema}.resource (name, issuer) VALUES (p_resource, 'local')
        ON CONFLICT (name) DO NOTHING;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    END IF;
    IF r.issuer <> 'local' THEN
        PERFORM ${flyway:defaultSchema}.require_local(r); -- raises its ZF004
    END IF;
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

    -- Handover without waiting (see the head): the locks V12's handover takes, when both are free.
    v_space := r.lock_space;
    IF pg_try_advisory_xact_lock(v_space, ${flyway:defaultSchema}.advisory_key(r.id)) THEN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE SKIP LOCKED;
        v_handed_over := FOUND AND r.lock_space = v_space;
        IF NOT FOUND THEN
            SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = l.resource_id;
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
    UPDATE ${flyway:defaultSchema}.lease
       SET holder = p_holder, token = v_token, acquired_at = clock_timestamp(),
           expires_at = clock_timestamp() + p_ttl, released_at = NULL
     WHERE resource_id = r.id
    RETURNING * INTO l;
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

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.release(p_resource text, p_token bigint)
    RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    l ${flyway:defaultSchema}.lease;
BEGIN
    -- The holder releasing its own lease: one statement (see the head).
    UPDATE ${flyway:defaultSchema}.lease e
       SET holder = NULL, released_at = clock_timestamp(), expires_at = least(e.expires_at, clock_timestamp())
     WHERE e.resource_id = (SELECT s.id FROM ${flyway:defaultSchema}.resource s
                             WHERE s.name = p_resource AND s.issuer = 'local')
       AND e.token = p_token AND e.holder IS NOT NULL;
    IF FOUND THEN
        PERFORM pg_notify('fencing_lease_released', p_resource);
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
