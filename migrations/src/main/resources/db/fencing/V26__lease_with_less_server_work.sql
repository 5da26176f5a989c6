-- The lease with less server work per acquisition (issue 14). Nothing is decided differently from
-- V23 (try_acquire), V16 (issue_token) and V1 (what a resource row may hold). Counted with
-- callgrind on one backend (docs/ARCHITECTURE.md, "Lease operations at the floor"): an
-- acquire+release cost about 1.45 million backend instructions, of which about 15% went to CHECK
-- constraints (PostgreSQL reads every CHECK of a table from its stored text and plans it again in
-- every UPDATE: nine per acquire+release), about 6% to the foreign key check of the issuance row (a
-- query of its own through SPI), and the rest mostly to setting up PL/pgSQL functions and
-- statements once per transaction. What was taken away:
--
-- 1. resource's seven CHECK constraints are two, admitting exactly the same rows:
--    (issuer = 'local' AND max_seen <= last_issued) OR (issuer = 'external' AND last_issued = 0)
--    is V1's issuer IN ('local', 'external'), "external or max_seen <= last_issued" and "local or
--    last_issued = 0" together; 0 <= last_used AND last_used <= max_seen is V1's last_used >= 0 and
--    last_used <= max_seen. V1's max_seen >= 0 and last_issued >= 0 followed from these and are
--    gone: max_seen >= last_used >= 0, and last_issued >= max_seen (local) or = 0 (external).
-- 2. issuance's foreign key to resource: its only writer is try_acquire, which inserts the id of
--    the resource row it holds locked, and no function deletes a resource; deleting one by hand
--    is still refused, by the lease row every issued resource has (lease's foreign key, kept).
-- 3. issue_token reads the epoch, the timeline and the sequence's last value in one statement,
--    and takes the issuance lock itself (own_epoch, epoch_of, current_timeline and lock_issuance
--    in line: each call of one saved, set and restored search_path). Adoption of an unseen key
--    runs V16's code unchanged.
-- 4. try_acquire tests validate_resource_name's conditions in line (as V20 did for the
--    intervals), and looks for a missing lease row only when it locked none.

ALTER TABLE ${flyway:defaultSchema}.resource
    DROP CONSTRAINT resource_issuer_check,
    DROP CONSTRAINT resource_check,
    DROP CONSTRAINT resource_check1,
    DROP CONSTRAINT resource_check2,
    DROP CONSTRAINT resource_max_seen_check,
    DROP CONSTRAINT resource_last_issued_check,
    DROP CONSTRAINT resource_last_used_check,
    ADD CONSTRAINT resource_issued_check
        CHECK ((issuer = 'local' AND max_seen <= last_issued) OR (issuer = 'external' AND last_issued = 0)),
    ADD CONSTRAINT resource_used_check CHECK (0 <= last_used AND last_used <= max_seen);

ALTER TABLE ${flyway:defaultSchema}.issuance DROP CONSTRAINT issuance_resource_id_fkey;

-- issue_token(floor): V16's, with its helpers in line on the common path (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.issue_token(p_floor bigint)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch;
    v_system bigint;
    v_database oid;
    v_epoch_offset integer;
    v_epoch bigint;
    v_base bigint;
    v_need bigint;
    v_last bigint;
    v_token bigint;
    v_exclusive boolean := false;
    v_offset bigint;
BEGIN
    -- own_epoch(), epoch_of(own_epoch()) and the sequence's last value
    SELECT c.system_identifier, c.database_oid, c.epoch_offset,
           greatest(('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint - 1 + c.epoch_offset,
                    c.epoch_floor),
           s.last_value
      INTO v_system, v_database, v_epoch_offset, v_epoch, v_last
      FROM ${flyway:defaultSchema}.token_seq s
      LEFT JOIN ${flyway:defaultSchema}.cluster_epoch c
        ON c.system_identifier = (SELECT system_identifier FROM pg_control_system())
       AND c.database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND c.resource_table = '${flyway:defaultSchema}.resource'::regclass;
    IF v_system IS NULL THEN
        -- restored, cloned or upgraded into a cluster or database this fence has not seen (V16)
        PERFORM ${flyway:defaultSchema}.lock_issuance(true);
        v_exclusive := true;
        e := ${flyway:defaultSchema}.own_epoch();
        IF e.system_identifier IS NULL THEN
            PERFORM ${flyway:defaultSchema}.record_epoch(${flyway:defaultSchema}.adoption_epoch(), 'adopted');
            e := ${flyway:defaultSchema}.own_epoch();
        END IF;
        v_epoch := ${flyway:defaultSchema}.epoch_of(e);
        v_last := (SELECT last_value FROM ${flyway:defaultSchema}.token_seq);
    END IF;
    v_base := v_epoch << 43;
    v_need := greatest(coalesce(p_floor, 0), v_base);

    -- 2^43 - 1 is the epoch's last counter value: refuse before moving the sequence past it
    IF greatest(v_need, v_last) >= v_base + 8796093022207 THEN
        PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, greatest(v_need, v_last) + 1, p_floor);
    END IF;
    IF NOT v_exclusive THEN
        v_exclusive := v_last < v_need;
        -- lock_issuance(v_exclusive)
        IF v_exclusive THEN
            PERFORM pg_advisory_xact_lock('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16);
        ELSE
            PERFORM pg_advisory_xact_lock_shared('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16);
        END IF;
        -- An advance that committed while this waited for the lock has moved the epoch: this
        -- transaction read the old one. READ COMMITTED: a plain read, in a later statement than
        -- the lock (V16). Otherwise FOR SHARE: a row changed after the snapshot raises 40001.
        IF current_setting('transaction_isolation') = 'read committed' THEN
            v_offset := (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
                          WHERE (c.system_identifier, c.database_oid, c.resource_table)
                              = (v_system, v_database, '${flyway:defaultSchema}.resource'::regclass));
        ELSE
            v_offset := (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
                          WHERE (c.system_identifier, c.database_oid, c.resource_table)
                              = (v_system, v_database, '${flyway:defaultSchema}.resource'::regclass)
                            FOR SHARE);
        END IF;
        IF v_offset IS DISTINCT FROM v_epoch_offset THEN
            RAISE EXCEPTION USING ERRCODE = '40001',
                MESSAGE = 'fencing: the token epoch was advanced while this issuance waited; retry the transaction';
        END IF;
    END IF;
    v_token := nextval('${flyway:defaultSchema}.token_seq');
    IF v_token <= v_need THEN
        PERFORM setval('${flyway:defaultSchema}.token_seq', v_need);
        v_token := nextval('${flyway:defaultSchema}.token_seq');
    END IF;
    IF v_token > v_base + 8796093022207 THEN
        PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, v_token, p_floor);
    END IF;
    RETURN v_token;
END
$$;

-- try_acquire: V23's, with validate_resource_name's checks in line and the lease row looked for
-- only when none was locked (see the head).
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

    -- The lease row lock orders acquirers; another acquisition in progress is contention. The
    -- lease row is looked for only when none was locked: created if missing, then locked.
    SELECT * INTO l FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        IF NOT EXISTS (SELECT FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id) THEN
            INSERT INTO ${flyway:defaultSchema}.lease (resource_id) VALUES (r.id) ON CONFLICT DO NOTHING;
            SELECT * INTO l FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id FOR UPDATE SKIP LOCKED;
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
