-- Intervals with months or years are refused (found reviewing V20). PostgreSQL compares intervals
-- with a month as 30 days, but adds a month to a timestamp as a calendar month: ttl '1 mon -29 days'
-- passed validate_interval's range check as 1 day, and on 1 February try_acquire then granted a
-- lease with expires_at a day in the past (acquired = true, expired at once); '1 mon -23 days'
-- (7 days by comparison) gave 8 days from 1 March, past the 7-day maximum. Since V2, ttl of
-- try_acquire and renew and try_acquire's handover_timeout: bad input that was not refused.
-- validate_interval now refuses a month or year part with ZF006 and a message that says so (days
-- and times are exact up to a daylight-saving hour); try_acquire's inlined checks (V20) send such
-- an interval to it. Nothing else in try_acquire changes: the function below is V20's with those
-- two conditions extended. The Java LeaseClient sends microseconds and never met this.

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.validate_interval(p_name text, p_value interval, p_min interval, p_max interval)
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
    IF extract(month FROM p_value) <> 0 OR extract(year FROM p_value) <> 0 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('%s must not have months or years (their length varies), was %s: give days, hours, minutes or seconds',
                   p_name, p_value),
            jsonb_build_object('argument', p_name, 'value', p_value::text));
    END IF;
END
$$;

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
