-- A leftover of the reviews (docs/ARCHITECTURE.md, "Leftovers of the reviews", third round).
--
-- fence_full() under REPEATABLE READ / SERIALIZABLE turns the 40001 of a resource row updated
-- after the snapshot into ZF001 "a newer token was issued after this transaction began" ("do not
-- retry") when the token is the snapshot's max_seen. V32 made a key space change a 40001; other
-- updates that issue nothing, has_protected set by protect() and cleared by unprotect(), still told
-- the current holder it was stale. The row's current values cannot be read under the snapshot, but
-- the issuance can be ruled out: try_acquire updates the lease row in every transaction that issues
-- a token (with max_seen and last_issued). So for a local resource and the token the snapshot holds
-- current, fence_full takes a share lock on the lease row, NOWAIT: it succeeds only if no update of
-- that row committed after the snapshot (else 40001, caught) and no transaction holds it now (else
-- 55P03, caught); then no newer token has committed, and the lock holds every acquisition off until
-- this transaction ends. The 40001 is raised as such, saying so; the retry decides on the row as it
-- is (ProtectFlagIsolationTest). Anything else is V32's: a token below the snapshot's max_seen
-- stays ZF001, a lease row renewed, released or taken since the snapshot still reads as ZF001, as
-- does an external resource (its max_seen advances without a lease). Nothing is accepted here: the
-- transaction is refused either way, so the fast path and check_at_token are untouched. Only the
-- error path of REPEATABLE READ / SERIALIZABLE checks pays for it.
-- CREATE OR REPLACE keeps the owner and privileges (not SECURITY DEFINER: an internal function
-- called by the fence's pinned-path functions, as V10 and V32 left it). Depends on V32.

-- fence_full(): V32's, the lease row consulted before ZF001 (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence_full(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    v_space integer;
    v_unissued boolean;
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
            -- V35: the row was updated after the snapshot, but not by an issuance when the lease
            -- row, which every issuance updates in the same transaction, is unchanged since it
            -- (its share lock succeeds): has_protected (protect, unprotect), the key space. No
            -- newer token has committed, and none can until this transaction ends (the lock).
            IF p_token = r.max_seen AND r.issuer = 'local' THEN
                BEGIN
                    PERFORM FROM ${flyway:defaultSchema}.lease l WHERE l.resource_id = r.id FOR SHARE NOWAIT;
                    v_unissued := FOUND;
                EXCEPTION WHEN serialization_failure OR lock_not_available THEN
                    v_unissued := false; -- updated since (an issuance, a renewal, a release), or in flux
                END;
                IF v_unissued THEN
                    RAISE EXCEPTION USING ERRCODE = '40001',
                        MESSAGE = format('fencing: resource "%s" was changed after this transaction began, and no newer token was issued; retry the transaction',
                                         r.name),
                        DETAIL = jsonb_build_object('resource', r.name, 'token', p_token)::text,
                        HINT = 'no newer token is known to this transaction; its retry decides on the resource as it is now';
                END IF;
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
