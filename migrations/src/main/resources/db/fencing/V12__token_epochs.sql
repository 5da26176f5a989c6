-- Token epochs (issue 16): tokens stay monotonic across failover, PITR, split brain and restores.
--
-- A token is epoch * 2^43 + counter (counter 1 .. 2^43 - 1; epochs 0 .. 2^20 - 1).
--
--   epoch = (timeline - 1) + epoch_offset
--
-- timeline is the server's current WAL timeline, read from the name of the WAL segment being
-- written (pg_walfile_name(pg_current_wal_lsn())), which follows a promotion at once;
-- pg_control_checkpoint() shows the old timeline until the first checkpoint after it. Every
-- promotion of a standby and every point-in-time recovery starts a new, higher timeline, so
-- tokens issued after it are above every token of the old timeline, including those lost with
-- the WAL the standby never received. An old primary that keeps running (split brain) stays on
-- its timeline: its tokens stay below the new primary's, which refuses them (never issued there).
--
-- epoch_offset lives in cluster_epoch, keyed by the cluster (system identifier), the database
-- and this fence (the OID of its resource table). A logical dump restored elsewhere, a database
-- cloned from a template and pg_upgrade all start under a key the fence has not seen, and the
-- timeline may be back at 1: the first issuance there adopts an epoch 1024 above everything
-- recorded (tokens issued and epochs of every key), so its tokens exceed all tokens issued
-- before, including those issued by the source after the dump (up to 1023 epoch changes).
--
-- The counter is token_seq, as before; issue_token(floor) is the one place that issues. It never
-- issues at or below floor (a resource's max_seen and last_issued: the self-healing floor), and
-- refuses with 2200H (sequence_generator_limit_exceeded) rather than leave the epoch's range: the
-- operator then runs advance_epoch(). advance_sequence keeps V8's base rule; it moves the
-- counter within the current epoch.
--
-- Concurrency: moving the sequence up to an epoch's base (setval) could move it below a value
-- another transaction just took; so issuers hold a shared advisory lock, and the one that moves
-- the sequence (or adopts or advances an epoch) an exclusive one, until they commit. An issuance
-- that waited while an advance committed is told to retry (40001). (EpochTest)

CREATE TABLE ${flyway:defaultSchema}.cluster_epoch (
    system_identifier bigint      NOT NULL,   -- pg_control_system()
    database_oid      oid         NOT NULL,   -- this database
    resource_table    oid         NOT NULL,   -- this fence's resource table
    epoch_offset      integer     NOT NULL,   -- epoch = (timeline - 1) + epoch_offset
    epoch_floor       integer     NOT NULL CHECK (epoch_floor >= 0), -- the epoch when recorded
    reason            text        NOT NULL CHECK (reason IN ('installed', 'adopted', 'advanced')),
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (system_identifier, database_oid, resource_table)
);

-- The timeline WAL is written on now (the server must not be in recovery).
CREATE FUNCTION ${flyway:defaultSchema}.current_timeline()
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint
$$;

-- The epoch of the largest token this database issued.
CREATE FUNCTION ${flyway:defaultSchema}.issued_epoch()
    RETURNS integer
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (greatest(s.last_value, (SELECT coalesce(max(last_issued), 0)
                                      FROM ${flyway:defaultSchema}.resource WHERE issuer = 'local')) >> 43)::integer
      FROM ${flyway:defaultSchema}.token_seq s
$$;

-- The cluster_epoch row of this cluster, database and fence; NULL columns when there is none yet.
CREATE FUNCTION ${flyway:defaultSchema}.own_epoch()
    RETURNS ${flyway:defaultSchema}.cluster_epoch
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT e.* FROM (SELECT 1) AS one
      LEFT JOIN ${flyway:defaultSchema}.cluster_epoch e
        ON e.system_identifier = (SELECT system_identifier FROM pg_control_system())
       AND e.database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND e.resource_table = '${flyway:defaultSchema}.resource'::regclass
$$;

-- Records epoch p_epoch for this key (insert or update); returns it. Caller holds the exclusive lock.
CREATE FUNCTION ${flyway:defaultSchema}.record_epoch(p_epoch bigint, p_reason text)
    RETURNS integer
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_timeline bigint := ${flyway:defaultSchema}.current_timeline();
BEGIN
    IF p_epoch > 1048575 THEN
        RAISE EXCEPTION USING ERRCODE = '2200H',
            MESSAGE = format('fencing: epoch %s is past the last epoch (1048575): no more tokens can be issued', p_epoch),
            DETAIL = jsonb_build_object('epoch', p_epoch, 'reason', p_reason)::text;
    END IF;
    INSERT INTO ${flyway:defaultSchema}.cluster_epoch AS e
           (system_identifier, database_oid, resource_table, epoch_offset, epoch_floor, reason)
    VALUES ((SELECT system_identifier FROM pg_control_system()),
            (SELECT oid FROM pg_database WHERE datname = current_database()),
            '${flyway:defaultSchema}.resource'::regclass,
            p_epoch - (v_timeline - 1), p_epoch, p_reason)
    ON CONFLICT (system_identifier, database_oid, resource_table) DO UPDATE
       SET epoch_offset = excluded.epoch_offset, epoch_floor = excluded.epoch_floor,
           reason = excluded.reason, recorded_at = now();
    RETURN p_epoch;
END
$$;

-- The epoch of the next issuance under a recorded key (NULL when this key has none yet).
CREATE FUNCTION ${flyway:defaultSchema}.epoch_of(e ${flyway:defaultSchema}.cluster_epoch)
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(${flyway:defaultSchema}.current_timeline() - 1 + e.epoch_offset, e.epoch_floor)
$$;

-- The epoch a key the fence has not seen adopts: 1024 above everything recorded.
CREATE FUNCTION ${flyway:defaultSchema}.adoption_epoch()
    RETURNS bigint
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(${flyway:defaultSchema}.issued_epoch(),
                    (SELECT coalesce(max(epoch_floor), 0) FROM ${flyway:defaultSchema}.cluster_epoch))::bigint + 1024
$$;

-- The advisory lock of issuance (see the head): this fence's resource table and 16.
CREATE FUNCTION ${flyway:defaultSchema}.lock_issuance(p_exclusive boolean)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_exclusive THEN
        PERFORM pg_advisory_xact_lock('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16);
    ELSE
        PERFORM pg_advisory_xact_lock_shared('${flyway:defaultSchema}.resource'::regclass::oid::integer, 16);
    END IF;
END
$$;

-- Raises 2200H: the counter of p_epoch cannot give p_token.
CREATE FUNCTION ${flyway:defaultSchema}.exhausted(p_epoch bigint, p_token bigint, p_floor bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = '2200H',
        MESSAGE = format('fencing: the token counter of epoch %s is exhausted (the next token would be %s, past the epoch''s last token %s)',
                         p_epoch, p_token, (p_epoch << 43) + 8796093022207),
        DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor,
                                    'last_token_of_epoch', (p_epoch << 43) + 8796093022207)::text,
        HINT = 'an operator runs SELECT fencing.advance_epoch(); tokens then continue in the next epoch';
END
$$;

-- issue_token(floor): the next token, greater than floor and than every token issued before in
-- this cluster's history (see the head). The only caller of nextval(token_seq). Call it under
-- the resource's lease row lock, with floor = greatest(max_seen, last_issued) of the resource.
CREATE FUNCTION ${flyway:defaultSchema}.issue_token(p_floor bigint)
    RETURNS bigint
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch := ${flyway:defaultSchema}.own_epoch();
    v_epoch bigint;
    v_base bigint;
    v_need bigint;
    v_last bigint;
    v_token bigint;
    v_exclusive boolean := false;
BEGIN
    IF e.system_identifier IS NULL THEN
        -- restored, cloned or upgraded into a cluster or database this fence has not seen
        PERFORM ${flyway:defaultSchema}.lock_issuance(true);
        v_exclusive := true;
        e := ${flyway:defaultSchema}.own_epoch();
        IF e.system_identifier IS NULL THEN
            PERFORM ${flyway:defaultSchema}.record_epoch(${flyway:defaultSchema}.adoption_epoch(), 'adopted');
            e := ${flyway:defaultSchema}.own_epoch();
        END IF;
    END IF;
    v_epoch := ${flyway:defaultSchema}.epoch_of(e);
    v_base := v_epoch << 43;
    v_need := greatest(coalesce(p_floor, 0), v_base);

    v_last := (SELECT last_value FROM ${flyway:defaultSchema}.token_seq);
    -- 2^43 - 1 is the epoch's last counter value: refuse before moving the sequence past it
    IF greatest(v_need, v_last) >= v_base + 8796093022207 THEN
        PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, greatest(v_need, v_last) + 1, p_floor);
    END IF;
    IF NOT v_exclusive THEN
        v_exclusive := v_last < v_need;
        PERFORM ${flyway:defaultSchema}.lock_issuance(v_exclusive);
        -- An advance that committed while this waited for the lock has moved the epoch: this
        -- transaction read the old one. (FOR SHARE: under REPEATABLE READ a row changed after
        -- the snapshot raises 40001 by itself.)
        IF (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c
             WHERE (c.system_identifier, c.database_oid, c.resource_table)
                 = (e.system_identifier, e.database_oid, e.resource_table)
               FOR SHARE) IS DISTINCT FROM e.epoch_offset THEN
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

-- advance_epoch(): operator command. Moves this cluster's tokens into a new epoch, above every
-- token issued here: after the counter of an epoch is exhausted, after a restore that kept the
-- timeline (a file-system snapshot or a base backup started without recovery), or whenever
-- validate() says it is due. Returns the new epoch. Not granted to the application role.
CREATE FUNCTION ${flyway:defaultSchema}.advance_epoch()
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch;
BEGIN
    PERFORM ${flyway:defaultSchema}.lock_issuance(true);
    e := ${flyway:defaultSchema}.own_epoch();
    IF e.system_identifier IS NULL THEN
        RETURN ${flyway:defaultSchema}.record_epoch(${flyway:defaultSchema}.adoption_epoch(), 'adopted');
    END IF;
    RETURN ${flyway:defaultSchema}.record_epoch(
        greatest(${flyway:defaultSchema}.epoch_of(e), ${flyway:defaultSchema}.issued_epoch()) + 1, 'advanced');
END
$$;

-- epoch_status(): what issuance stands on, for operators and validate(). advance_due says why
-- advance_epoch() is due (NULL when it is not).
CREATE FUNCTION ${flyway:defaultSchema}.epoch_status()
    RETURNS TABLE (timeline bigint, epoch bigint, epoch_offset integer,
                   adoption_pending boolean, last_token bigint, counter_left bigint, advance_due text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch := ${flyway:defaultSchema}.own_epoch();
    v_last bigint;
    v_epoch bigint;
    v_left bigint;
    v_due text;
BEGIN
    SELECT greatest(s.last_value, (SELECT coalesce(max(last_issued), 0)
                                     FROM ${flyway:defaultSchema}.resource WHERE issuer = 'local'))
      INTO v_last FROM ${flyway:defaultSchema}.token_seq s;
    IF e.system_identifier IS NULL THEN
        v_epoch := ${flyway:defaultSchema}.adoption_epoch();
    ELSE
        v_epoch := ${flyway:defaultSchema}.epoch_of(e);
    END IF;
    v_left := ((v_epoch << 43) + 8796093022207) - greatest(v_last, v_epoch << 43);
    IF v_left < 0 THEN
        v_due := format('tokens up to %s were issued, past the last token %s of epoch %s', v_last,
                        (v_epoch << 43) + 8796093022207, v_epoch);
    ELSIF v_left < 4398046511104 THEN -- 2^42: half the epoch's counter is used
        v_due := format('half the token counter of epoch %s is used (%s tokens left)', v_epoch, v_left);
    END IF;
    RETURN QUERY SELECT ${flyway:defaultSchema}.current_timeline(), v_epoch, e.epoch_offset,
                        e.system_identifier IS NULL, v_last, greatest(v_left, 0), v_due;
END
$$;

-- The row of this cluster: the epoch of tokens already issued (normally 0) is kept.
DO $install$
BEGIN
    PERFORM ${flyway:defaultSchema}.record_epoch(
        greatest(${flyway:defaultSchema}.current_timeline() - 1, ${flyway:defaultSchema}.issued_epoch()), 'installed');
END
$install$;

-- ---------------------------------------------------------------------------------------------
-- Tamper evidence that survives a logical dump and restore
-- ---------------------------------------------------------------------------------------------

-- A restore leaves an ACL that equals the default as NULL where the migrations left it spelled
-- out (REVOKE ... FROM PUBLIC): the same privileges. And it names the internal triggers of foreign
-- keys after their new OIDs (the constraints themselves are compared). Fingerprints compare
-- privileges and exclude internal triggers, so validate() does not report every table as changed
-- after pg_dump | psql. (FailoverTest)
CREATE FUNCTION ${flyway:defaultSchema}.acl_text(p_acl aclitem[], p_kind "char", p_owner oid)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(string_agg(a::text, ',' ORDER BY a::text), '')
      FROM unnest(coalesce(p_acl, acldefault(p_kind, p_owner))) AS a
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.catalog_fingerprint()
    RETURNS TABLE (object text, fingerprint text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'function ' || p.oid::regprocedure::text,
           md5(pg_get_functiondef(p.oid) || ' owner=' || p.proowner::regrole::text
               || ' acl=' || ${flyway:defaultSchema}.acl_text(p.proacl, 'f', p.proowner))
      FROM pg_proc p
     WHERE p.pronamespace = '${flyway:defaultSchema}'::regnamespace
    UNION ALL
    SELECT 'relation ' || c.oid::regclass::text,
           md5(c.relkind::text || ' owner=' || c.relowner::regrole::text
               || ' acl=' || ${flyway:defaultSchema}.acl_text(c.relacl, (CASE c.relkind WHEN 'S' THEN 's' ELSE 'r' END)::"char", c.relowner)
               || ' persistence=' || c.relpersistence::text
               || ' rls=' || c.relrowsecurity::text
               || ' columns=' || coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                                            || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                                                            ', ' ORDER BY a.attnum)
                                             FROM pg_attribute a
                                            WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
               || ' constraints=' || coalesce((SELECT string_agg(pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname)
                                                 FROM pg_constraint k WHERE k.conrelid = c.oid), '')
               || ' triggers=' || coalesce((SELECT string_agg(pg_get_triggerdef(t.oid), ', ' ORDER BY t.tgname)
                                              FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), '')
               || ' policies=' || coalesce((SELECT string_agg(pol.polname || ' ' || pol.polcmd::text, ', ')
                                              FROM pg_policy pol WHERE pol.polrelid = c.oid), '')
               || coalesce((SELECT ' sequence=' || s.seqtypid::regtype::text || ' cache=' || s.seqcache
                                   || ' cycle=' || s.seqcycle::text || ' increment=' || s.seqincrement
                              FROM pg_sequence s WHERE s.seqrelid = c.oid), ''))
      FROM pg_class c
     WHERE c.relnamespace = '${flyway:defaultSchema}'::regnamespace
       AND c.relkind IN ('r', 'p', 'S', 'v')
       AND c.relname <> '${flyway:table}'
$$;

-- ---------------------------------------------------------------------------------------------
-- try_acquire issues through issue_token (the handover as in V10, the rest as in V2)
-- ---------------------------------------------------------------------------------------------

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

    -- Handover (V10): wait for the fenced transactions of earlier tokens to end: the advisory share
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

    -- A token is issued only when this commit is durable (hazard: nextval alone is not WAL-flushed).
    IF current_setting('synchronous_commit') IN ('off', 'local') THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
    RETURN QUERY SELECT true, v_token, l.holder, l.expires_at;
END
$$;

ALTER TABLE ${flyway:defaultSchema}.cluster_epoch OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.cluster_epoch FROM PUBLIC;
ALTER FUNCTION ${flyway:defaultSchema}.current_timeline() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.issued_epoch() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.own_epoch() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.record_epoch(bigint, text) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.epoch_of(${flyway:defaultSchema}.cluster_epoch) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.adoption_epoch() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.lock_issuance(boolean) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.exhausted(bigint, bigint, bigint) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.issue_token(bigint) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.advance_epoch() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.epoch_status() OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.current_timeline(),
    ${flyway:defaultSchema}.issued_epoch(),
    ${flyway:defaultSchema}.own_epoch(),
    ${flyway:defaultSchema}.record_epoch(bigint, text),
    ${flyway:defaultSchema}.epoch_of(${flyway:defaultSchema}.cluster_epoch),
    ${flyway:defaultSchema}.adoption_epoch(),
    ${flyway:defaultSchema}.lock_issuance(boolean),
    ${flyway:defaultSchema}.exhausted(bigint, bigint, bigint),
    ${flyway:defaultSchema}.issue_token(bigint),
    ${flyway:defaultSchema}.advance_epoch(),
    ${flyway:defaultSchema}.epoch_status()
FROM PUBLIC;
-- acl_text stays with the migrating user, as catalog_fingerprint (V1)
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.acl_text(aclitem[], "char", oid) FROM PUBLIC;
