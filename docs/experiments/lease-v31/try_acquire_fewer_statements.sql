-- NOT A MIGRATION: measured and left out (docs/benchmark/lease-and-growth.md, "Where V29's
-- instructions go, and fewer statements"). Written as migration V31 on a branch; its number stays unused.

-- The lease with fewer statements per acquisition (issue 14). Nothing is decided differently from
-- V29 (try_acquire): same tokens, same locks in the same order, same errors. Counted with
-- callgrind on one backend (docs/benchmark/lease-cpu-callgrind.sh; docs/ARCHITECTURE.md, "Lease
-- operations at the floor"). What changed in try_acquire's common path:
--
-- 1. The issuance lock (shared) is taken in the expression that calls nextval, not in a PERFORM
--    of its own (a statement with an executor of its own): the same lock, before nextval, after
--    the epoch was read. CASE evaluates its condition before its result.
-- 2. The result columns are filled by the lease UPDATE's RETURNING: fewer expressions, each
--    prepared once per transaction.
-- 3. The argument pre-check tests "no month or year part" as date_trunc('month', x) <> '0' (the
--    interval's month field, which holds years and months, is zero) rather than two extract()
--    comparisons; when it holds, V23's checks run one by one and raise the same errors.
-- Instructions per acquire+release: 1,027.6k -> 1,013.3k. Measured and left out (docs): the
-- resource row read and its lease row locked in one statement (a join, FOR UPDATE OF the lease
-- row SKIP LOCKED): two executor set-ups fewer, but +15k in all.

-- try_acquire: V29's (see the head).
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
    v_system bigint;
    v_database oid;
    v_epoch_offset integer;
    v_epoch bigint;
    v_last bigint;
    v_called boolean;
    v_base bigint;
    v_need bigint;
BEGIN
    -- V29's four argument checks as one condition, true whenever one of them is; only then are
    -- they tested one by one, in V26's order, to raise the same error.
    IF p_resource IS NULL OR p_resource = '' OR length(p_resource) > 200
       OR p_resource !~ '^[A-Za-z0-9_.:/@+=#-]*$'
       OR p_holder IS NULL OR p_holder = '' OR length(p_holder) > 200 OR p_holder ~ '[[:cntrl:]]'
       OR p_ttl IS NULL OR p_ttl < interval '1 millisecond' OR p_ttl > interval '7 days'
       OR date_trunc('month', p_ttl) <> interval '0'
       OR p_handover_timeout IS NULL OR p_handover_timeout < interval '1 millisecond'
       OR p_handover_timeout > interval '1 hour'
       OR date_trunc('month', p_handover_timeout) <> interval '0' THEN
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

    -- Handover without waiting (V20): the locks V12's handover takes, when both are free.
    -- handover key: V28's, the resource's name (the key every fast-path check locks shared)
    v_space := r.lock_space;
    IF pg_try_advisory_xact_lock(v_space, pg_catalog.hashtext(p_resource)) THEN
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
    IF v_handed_over AND current_setting('transaction_isolation') = 'read committed' THEN
        -- issue_token's first read (V26's statement)
        SELECT c.system_identifier, c.database_oid, c.epoch_offset,
               greatest(('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint - 1 + c.epoch_offset,
                        c.epoch_floor),
               q.last_value, q.is_called
          INTO v_system, v_database, v_epoch_offset, v_epoch, v_last, v_called
          FROM ${flyway:defaultSchema}.token_seq q
          LEFT JOIN ${flyway:defaultSchema}.cluster_epoch c
            ON c.system_identifier = (SELECT system_identifier FROM pg_control_system())
           AND c.database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND c.resource_table = '${flyway:defaultSchema}.resource'::regclass;
    END IF;
    -- issue_token's common path in line (V29): a recorded epoch, the sequence above the floor and
    -- the epoch's base and below its end, READ COMMITTED. Anything else: issue_token.
    v_base := v_epoch << 43;
    v_need := greatest(r.max_seen, r.last_issued, v_base);
    IF v_system IS NOT NULL AND (v_last > v_need OR (v_last = v_need AND v_called))
       AND v_last < v_base + 8796093022207 THEN
        -- the issuance lock, shared, then nextval (see the head)
        v_token := CASE WHEN pg_advisory_xact_lock_shared('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16)::text = ''
                        THEN nextval('${flyway:defaultSchema}.token_seq') END;
        -- issue_token's check after nextval: the sequence may have been set back since it was read
        -- (advance_sequence's setval takes no issuance lock); never at or below the floor.
        IF v_token <= v_need THEN
            PERFORM setval('${flyway:defaultSchema}.token_seq', v_need);
            v_token := nextval('${flyway:defaultSchema}.token_seq');
        END IF;
        -- issue_token's re-read of the epoch after its lock (V16: a later statement than the lock,
        -- so an advance committed before the lock is seen; none can commit after it), in the
        -- UPDATE of the resource row: no row when the epoch moved.
        UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()
         WHERE id = r.id
           AND (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
                 WHERE (c.system_identifier, c.database_oid, c.resource_table)
                     = (v_system, v_database, '${flyway:defaultSchema}.resource'::regclass)) = v_epoch_offset;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'fencing: the token epoch was advanced while this issuance waited; retry the transaction';
        END IF;
        IF v_token > v_base + 8796093022207 THEN
            PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, v_token, greatest(r.max_seen, r.last_issued));
        END IF;
    ELSE
        v_token := ${flyway:defaultSchema}.issue_token(greatest(r.max_seen, r.last_issued));
        UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()
         WHERE id = r.id;
    END IF;
    UPDATE ${flyway:defaultSchema}.lease e
       SET holder = p_holder, token = v_token, acquired_at = clock_timestamp(),
           expires_at = clock_timestamp() + p_ttl, released_at = NULL
     WHERE e.resource_id = r.id
    RETURNING true, e.token, e.holder, e.expires_at INTO acquired, token, holder, expires_at;
    INSERT INTO ${flyway:defaultSchema}.issuance (token, resource_id, holder, ttl) VALUES (v_token, r.id, p_holder, p_ttl);

    -- A token is issued only when this commit is durable (hazard 1: nextval alone is not flushed).
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RETURN NEXT;
END
$$;
