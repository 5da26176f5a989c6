-- Three defects noted by earlier reviews (docs/ARCHITECTURE.md, "Leftovers of the reviews (V32)").
-- Every other path decides, locks and errs as before.
--
-- 1. lock_for_advance(id, space) took pg_advisory_xact_lock(space, advisory_key(id)). Since V28
--    advisory_key(id) reads the resource's name, so it is NULL for an id with no row visible to the
--    calling statement, and the lock functions are STRICT: a NULL key (or space) took no lock and
--    returned as if it had. Its only caller, try_acquire's waiting handover, passes the id of a row
--    it read in the same transaction (no function deletes a resource), so no acquisition went through
--    unlocked; but the function's contract was "returns holding the key" and it could return
--    holding nothing. It now refuses a NULL key (ZF004, no such resource) or space (ZF006), and
--    takes the lock otherwise. (BadInputSqlTest B128, B129.)
-- 2. advance_sequence(gap) read the sequence and the resources' last_issued in one statement and
--    set the sequence in another, without the issuance lock: acquisitions that took values in
--    between had the sequence set back under them, and the next acquisition of another resource
--    was handed one of their tokens again (a duplicate key on issuance_pkey; an acquisition of the
--    same resource is kept above its own floor by issue_token's check after nextval). It now takes
--    the issuance lock exclusively, as advance_epoch does, before it reads: it waits for the
--    acquisitions that hold it shared and holds the next ones off until it ends.
--    (AdvanceSequenceInterleavingTest.)
-- 3. fence_full() under REPEATABLE READ / SERIALIZABLE turned the 40001 of a resource row updated
--    after the snapshot into ZF001 "a newer token was issued after this transaction began"
--    whenever the token was not above the snapshot's max_seen. set_advisory_key_space updates every
--    resource row (lock_space) without issuing anything, so a holder of the current token was told
--    it was stale ("do not retry"). When the key space in the catalog (read through the system
--    caches, which see what committed after the snapshot) is not the one the snapshot's row
--    carries, the 40001 is raised as such, saying so: the transaction is refused and may be
--    retried; its retry decides on the new row. A token below the snapshot's max_seen is stale
--    whatever changed after the snapshot: still ZF001, as before. (AdvisoryKeySpaceTest.)

-- 1. --------------------------------------------------------------------------------------------
-- Like V10's, no SET search_path (an internal helper: it runs under try_acquire's pinned path;
-- PrivilegesTest lists it); every name in it is qualified.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.lock_for_advance(p_id bigint, p_space integer)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_key integer;
BEGIN
    IF p_space IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'the advisory key space must not be null',
            pg_catalog.jsonb_build_object('argument', 'space', 'value', NULL, 'resource_id', p_id));
    END IF;
    v_key := ${flyway:defaultSchema}.advisory_key(p_id);
    IF v_key IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            pg_catalog.format('no fencing resource has id %s (none is visible to this transaction): its advisory key is unknown; no lock was taken',
                              coalesce(p_id::text, 'null')),
            pg_catalog.jsonb_build_object('argument', 'id', 'value', p_id));
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(p_space, v_key);
END
$$;

-- 2. --------------------------------------------------------------------------------------------
-- advance_sequence(gap): V8's, reading and setting the sequence under the issuance lock (V12's
-- key: this fence's resource table and 16), held exclusively until the transaction ends.
-- Under REPEATABLE READ / SERIALIZABLE the snapshot may predate the lock: every token committed
-- after it was taken from the sequence, whose last_value is read as it is now (sequences are not
-- MVCC) and which nothing sets back while the lock is held.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.advance_sequence(p_gap bigint)
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
    -- waits for the acquisitions in progress (they hold it shared from before nextval to commit)
    PERFORM pg_advisory_xact_lock('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16);
    -- (max_seen <= last_issued holds for local resources: a table constraint of V1)
    SELECT greatest(s.last_value, (SELECT coalesce(max(last_issued), 0)
                                     FROM ${flyway:defaultSchema}.resource WHERE issuer = 'local'))
      INTO v_base FROM ${flyway:defaultSchema}.token_seq s;
    IF p_gap > 9223372036854775807 - v_base THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('gap %s would move the token sequence past the largest bigint; the largest gap possible is %s',
                   p_gap, 9223372036854775807 - v_base),
            jsonb_build_object('argument', 'gap', 'value', p_gap, 'max', 9223372036854775807 - v_base));
    END IF;
    RETURN setval('${flyway:defaultSchema}.token_seq', v_base + p_gap);
END
$$;

-- 3. --------------------------------------------------------------------------------------------
-- fence_full(): V10's, its REPEATABLE READ / SERIALIZABLE refusal made truthful (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence_full(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    v_space integer;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    r := ${flyway:defaultSchema}.find_resource(p_resource);

    IF r.strict_mode THEN
        -- (the fast path never takes a strict resource's share lock: nothing to wait for here)
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
        -- (External resources are share-locked by row only: no advisory lock to wait for.)
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
        -- (40001). A token not above the snapshot's max_seen is stale if the update raised
        -- max_seen; but set_advisory_key_space updates every row without raising it (V32). The
        -- key space it committed is read from the catalog through the system caches, which see
        -- past the snapshot (the fast path's constant, "key space"). (A subtransaction, so only here.)
        BEGIN
            SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
        EXCEPTION WHEN serialization_failure THEN
            -- (only for a token the snapshot holds current: one below its max_seen is stale
            -- whatever changed after it)
            IF p_token >= r.max_seen THEN
                v_space := pg_catalog.substring(
                    pg_catalog.pg_get_functiondef('${flyway:defaultSchema}.fence(text,bigint)'::pg_catalog.regprocedure),
                    '(-?[0-9]+) /\* key space \*/')::integer;
            END IF;
            IF p_token >= r.max_seen AND v_space IS DISTINCT FROM r.lock_space THEN
                RAISE EXCEPTION USING ERRCODE = '40001',
                    MESSAGE = format('fencing: the advisory key space of resource "%s" was changed (set_advisory_key_space) after this transaction began; retry the transaction',
                                     r.name),
                    DETAIL = jsonb_build_object('resource', r.name, 'token', p_token,
                                                'lock_space', r.lock_space, 'current_lock_space', v_space)::text,
                    HINT = 'no newer token is known to this transaction; its retry decides on the resource as it is now';
            END IF;
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
