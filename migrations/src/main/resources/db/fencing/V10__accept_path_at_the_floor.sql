-- The accept path at the floor (issue 14). Nothing is decided differently from V8; what changes is
-- how the fence holds off the next token while an accepted transaction is open, and what the
-- accept path does besides. docs/ARCHITECTURE.md ("The accept path") argues it hazard by hazard.
--
-- 1. READ COMMITTED, a local non-strict resource, token = max_seen (every fenced transaction of a
--    lease holder): the check takes a transaction-level advisory SHARE lock keyed by the resource,
--    pg_advisory_xact_lock_shared(lock_space, key(id)), and reads max_seen in a later statement
--    (hazard 7: under READ COMMITTED each statement of a VOLATILE PL/pgSQL function has a snapshot
--    of its own, taken after the lock was granted). No tuple lock: no transaction id, no WAL, no
--    multixact, however many transactions of the same token run at once. try_acquire, the one
--    thing that raises a local resource's max_seen, first takes the same key's EXCLUSIVE advisory
--    lock, so it waits for every open accepted transaction, as it waited for their FOR SHARE row
--    locks before; then it takes the row lock too: REPEATABLE READ and SERIALIZABLE checks keep
--    V6's FOR SHARE row lock (a row updated after their snapshot gives 40001, which fence_full()
--    turns into ZF001), strict resources keep their UPDATE.
--    A ROLLBACK TO SAVEPOINT releases an advisory lock taken after the savepoint, as it releases a
--    row lock (hazard 8), and reverts the marker with it.
--    External resources keep V6's FOR SHARE (in the same first query's path). Their handover is the new holder's first write, and
--    an advisory lock queues: a new share request waits behind the advancer's waiting exclusive
--    one, where a FOR SHARE request is granted next to the granted share locks. So the old token's
--    overlapping transactions would no longer pass their checks while the new holder waits
--    (ExternalTokenHandoverTest pins the row-lock behaviour): a change of behaviour left to decide.

-- 2. The key: (lock_space, the resource id folded into 32 bits), the two-integer form of the
--    advisory lock functions, which never meets a lock taken with the one-bigint form. lock_space
--    is a column of the resource, so the check reads it with the row it reads anyway; the owner
--    sets it with set_advisory_key_space(space) so it cannot collide with an application's own
--    two-integer advisory locks. The change waits for every open transaction that used the fence
--    (ACCESS EXCLUSIVE on the resource table), and the check compares the space it locked with
--    the one it reads after the lock (a change committed in between: the full path decides).
--
-- 3. The marker of a passed check (V2, mark_checked: a SHA-256 and a transaction id) is written
--    only for a resource that protects a table (has_protected, kept by triggers on
--    protected_table and resource); fence_full() always leaves it. A resource protected while a
--    check without marker was open fails closed: its writes check again, or are refused (ZF002).
--
-- 4. fence() is the fast path, in two statements, and hands everything else to fence_full(), which
--    is V8's fence() (row locks) without V6's one-query fast path.
--    check_tokens of one resource calls fence() before validating what one entry cannot get wrong.

ALTER TABLE ${flyway:defaultSchema}.resource
    ADD COLUMN lock_space    integer NOT NULL DEFAULT 1178946115, -- 'FENC'
    ADD COLUMN has_protected boolean NOT NULL DEFAULT false;

-- ---------------------------------------------------------------------------------------------
-- 1. The fast accept path
-- ---------------------------------------------------------------------------------------------

-- The advisory key of a resource id: its low 32 bits as an integer (ids beyond 2^32 share keys
-- with smaller ones: such resources only wait for each other's handovers).
CREATE FUNCTION ${flyway:defaultSchema}.advisory_key(p_id bigint)
    RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT ((p_id OPERATOR(pg_catalog.&) 4294967295) OPERATOR(pg_catalog.-) 2147483648)::pg_catalog.int4
$$;

-- Takes the exclusive advisory lock of the resource: waits for every transaction accepted by the
-- fast path. Called before anything raises max_seen (and before its row lock).
CREATE FUNCTION ${flyway:defaultSchema}.lock_for_advance(p_id bigint, p_space integer)
    RETURNS void
    LANGUAGE sql
AS $$
    SELECT pg_catalog.pg_advisory_xact_lock(p_space, ${flyway:defaultSchema}.advisory_key(p_id))
$$;

-- fence_full(): V8's fence() without its one-query fast path. Always leaves the marker of a
-- passed check.
CREATE FUNCTION ${flyway:defaultSchema}.fence_full(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
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

-- fence(resource, token), behind check_token, check_tokens and the protected tables' triggers:
-- accepts p_token when it is the current token of a non-strict resource under READ COMMITTED,
-- holding the resource's advisory share lock until the transaction ends, and leaves the marker if
-- the resource protects a table. Everything else goes to fence_full(), which decides exactly as
-- V8's fence() did (row locks).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    v_id bigint;
    v_space integer;
    v_local boolean;
    v_locked boolean;
    v_accepted boolean;
    v_mark boolean;
BEGIN
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        -- The advisory lock is taken only for a local row that looks current (the target list is
        -- evaluated for rows that pass the WHERE). External resources: see the head.
        SELECT r.id, r.lock_space, r.issuer = 'local',
               CASE WHEN r.issuer = 'local' THEN
                   pg_advisory_xact_lock_shared(r.lock_space, ${flyway:defaultSchema}.advisory_key(r.id)) IS NOT NULL
               END
          INTO v_id, v_space, v_local, v_locked
          FROM ${flyway:defaultSchema}.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND NOT r.strict_mode;
        IF FOUND THEN
            IF v_local THEN
                -- hazard 7: the read that decides is a later statement than the lock
                SELECT r.max_seen = p_token AND r.lock_space = v_space, r.has_protected INTO v_accepted, v_mark
                  FROM ${flyway:defaultSchema}.resource r WHERE r.id = v_id;
            ELSE
                -- V6: FOR SHARE; a row updated meanwhile is re-checked (EvalPlanQual)
                SELECT true, r.has_protected INTO v_accepted, v_mark
                  FROM ${flyway:defaultSchema}.resource r WHERE r.id = v_id AND r.max_seen = p_token
                   FOR SHARE;
            END IF;
            IF v_accepted THEN
                IF v_mark THEN
                    PERFORM ${flyway:defaultSchema}.mark_checked(v_id, p_token);
                END IF;
                RETURN false;
            END IF;
        END IF;
    END IF;
    RETURN ${flyway:defaultSchema}.fence_full(p_resource, p_token);
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_token(p_resource text, p_token bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ${flyway:defaultSchema}.fence(p_resource, p_token);
    RETURN p_token;
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
    IF v_resources = 1 AND v_tokens = 1 AND array_ndims(p_resources) = 1 AND array_ndims(p_tokens) = 1 THEN
        -- one resource (every transaction that binds one): nothing to order
        RETURN ${flyway:defaultSchema}.fence(p_resources[array_lower(p_resources, 1)],
                                              p_tokens[array_lower(p_tokens, 1)])::integer;
    END IF;
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
    FOR pair IN SELECT r, t FROM unnest(p_resources, p_tokens) AS u(r, t) ORDER BY r COLLATE "C", t
    LOOP
        IF ${flyway:defaultSchema}.fence(pair.r, pair.t) THEN
            advanced := advanced + 1;
        END IF;
    END LOOP;
    RETURN advanced;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 2. Everything that raises max_seen waits for the fast path's transactions
-- ---------------------------------------------------------------------------------------------

-- try_acquire: V2's, with the handover waiting for the advisory share lockers first and then for
-- the row lockers, both within handover_timeout.
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
    v_floor bigint;
    v_lock_timeout text;
    v_deadline timestamptz;
    v_space integer;
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

    -- Handover: wait for the fenced transactions of earlier tokens to end: the advisory share
    -- lockers (READ COMMITTED), then the FOR SHARE row lockers (REPEATABLE READ, SERIALIZABLE).
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

-- ---------------------------------------------------------------------------------------------
-- 3. The advisory key space
-- ---------------------------------------------------------------------------------------------

-- set_advisory_key_space(space): operator command. The first key of the fence's two-integer
-- advisory locks (default 1178946115); choose one the application's own pg_advisory_*(int, int)
-- calls never use. Waits for every open transaction that used the fence (the resource table is
-- locked ACCESS EXCLUSIVE meanwhile); a REPEATABLE READ transaction whose snapshot predates the
-- change and that checks afterwards is refused as stale. Returns the previous space.
CREATE FUNCTION ${flyway:defaultSchema}.set_advisory_key_space(p_space integer)
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_previous integer;
BEGIN
    IF p_space IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'the advisory key space must not be null',
            jsonb_build_object('argument', 'space', 'value', NULL));
    END IF;
    LOCK TABLE ${flyway:defaultSchema}.resource IN ACCESS EXCLUSIVE MODE;
    SELECT pg_catalog.substring(pg_get_expr(d.adbin, d.adrelid), '^-?[0-9]+')::integer INTO v_previous
      FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE d.adrelid = '${flyway:defaultSchema}.resource'::regclass AND a.attname = 'lock_space';
    UPDATE ${flyway:defaultSchema}.resource SET lock_space = p_space WHERE lock_space <> p_space;
    EXECUTE format('ALTER TABLE ${flyway:defaultSchema}.resource ALTER COLUMN lock_space SET DEFAULT %s', p_space);
    RETURN v_previous;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 4. has_protected: which resources' checks leave a marker
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ${flyway:defaultSchema}.protects(p_resource text)
    RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM ${flyway:defaultSchema}.protected_table t
                    WHERE t.resource = p_resource
                       OR (t.resource_column IS NOT NULL AND starts_with(p_resource, t.prefix)))
$$;

-- A new resource: does a protected table name it already?
CREATE FUNCTION ${flyway:defaultSchema}.resource_protected()
    RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.has_protected := ${flyway:defaultSchema}.protects(NEW.name);
    RETURN NEW;
END
$$;

-- A newly protected table: its resources' checks leave markers from now on. The lock waits for
-- resources being created, so none of them misses it; it never waits for a fast-path check.
-- (Unprotecting leaves the flag: a marker too many costs time, never safety.)
CREATE FUNCTION ${flyway:defaultSchema}.table_protected()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE ${flyway:defaultSchema}.resource IN SHARE ROW EXCLUSIVE MODE;
    UPDATE ${flyway:defaultSchema}.resource SET has_protected = true
     WHERE NOT has_protected
       AND (name = NEW.resource OR (NEW.resource_column IS NOT NULL AND starts_with(name, NEW.prefix)));
    RETURN NULL;
END
$$;

CREATE TRIGGER resource_protected BEFORE INSERT ON ${flyway:defaultSchema}.resource
    FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.resource_protected();
CREATE TRIGGER table_protected AFTER INSERT ON ${flyway:defaultSchema}.protected_table
    FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.table_protected();

UPDATE ${flyway:defaultSchema}.resource SET has_protected = true WHERE ${flyway:defaultSchema}.protects(name);

-- ---------------------------------------------------------------------------------------------
-- Owners and grants of the new functions (CREATE OR REPLACE kept those of the replaced ones)
-- ---------------------------------------------------------------------------------------------

ALTER FUNCTION ${flyway:defaultSchema}.advisory_key(bigint) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.fence_full(text, bigint) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.lock_for_advance(bigint, integer) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.set_advisory_key_space(integer) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protects(text) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.resource_protected() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.table_protected() OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.advisory_key(bigint),
    ${flyway:defaultSchema}.fence_full(text, bigint),
    ${flyway:defaultSchema}.lock_for_advance(bigint, integer),
    ${flyway:defaultSchema}.set_advisory_key_space(integer),
    ${flyway:defaultSchema}.protects(text),
    ${flyway:defaultSchema}.resource_protected(),
    ${flyway:defaultSchema}.table_protected()
FROM PUBLIC;
