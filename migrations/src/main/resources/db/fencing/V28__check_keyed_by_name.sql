-- The check keyed by the resource's name (issue 14). The common check (READ COMMITTED, a local
-- non-strict resource, token = max_seen) was, since V10/V19: look the row up by name and take the
-- advisory share lock (lock_space, advisory_key(id)) in that statement's target list, then re-read
-- the row in a later statement (hazard 7: the decisive read is a later statement than the lock).
-- Its key came from the row, so it needed the row before the lock. Keyed by the name, the key is
-- known before any read:
--
--     pg_advisory_xact_lock_shared(<key space>, hashtext(resource))     -- first, alone
--     SELECT ... FROM resource WHERE name = resource                      -- one read, after it:
--       accepted if max_seen = token, issuer = 'local', not strict, lock_space = <key space>
--
-- (callgrind: check_one ~112k -> ~92k instructions per call, ~82k without the subtransaction of 6;
-- docs/ARCHITECTURE.md, "The carried check's server CPU" and "The check keyed by the name (V28)",
-- which argues it hazard by hazard.)
--
-- 1. One key per resource: (lock_space, hashtext(name)), two-integer form. Every exclusive locker
--    takes it: try_acquire's handover without waiting (pg_try_advisory_xact_lock(v_space,
--    hashtext(p_resource)) below) and its waiting handover (lock_for_advance(id, space), which
--    computes advisory_key(id)). advisory_key(id) is redefined as the key of that resource's name
--    (hashtext of the row's name; a resource's name never changes and no resource is deleted), so
--    nothing computes the id key any more: not lock_for_advance, not a body compiled before this
--    migration (next paragraph), not an operator's or a test's own lock taken with advisory_key(id).
--    Resources are no longer told apart by id beyond 2^32 but by hashtext: two names with one hash
--    share a key. That only makes them wait for each other's handovers, never accept more: every
--    decision is still the read of the row named, after the lock.
-- 2. In flight. A check accepted under the old key holds the id key and ACCESS SHARE on resource
--    (its first statement read the row) until its transaction ends: the LOCK below waits for every
--    such transaction, and an acquisition after this migration takes the name key, which is the
--    key every check after it takes. A transaction that began before this migration committed and
--    calls the fence only afterwards may still run a body compiled before it (PostgreSQL reads
--    invalidations at transaction start and when it takes a relation lock, so the outer call's
--    pg_proc entry can be stale): V19's check_token / check_one lock (lock_space,
--    advisory_key(id)) in a statement over resource, and V27's try_acquire try-locks the same
--    expression. Taking the relation lock processes the invalidations first, the cached plan that
--    inlined the old advisory_key depends on it and is planned again, and the new advisory_key
--    gives the name's key: an old body locks the key the new ones lock (NameKeyMigrationTest forces
--    both; with advisory_key left on the id, the stale check holds the id key and an acquisition
--    after the migration does not wait for it).
-- 3. The key space is written into the fast path as a constant, marked by a comment "key space";
--    the read requires lock_space = that constant, so a body whose constant is not the row's space
--    (a key space change, a stale body) never accepts on the fast path: the full path decides, on
--    row locks, as before. set_advisory_key_space (owner only, ACCESS EXCLUSIVE on resource, as
--    before) now also rewrites the constant in the five functions that carry it, and fails if a
--    function does not carry it exactly twice. catalog_fingerprint() reads that constant as 0, so
--    validate() does not see the operator's key space change as drift (any constant is safe: a
--    wrong one only sends checks to the full path).
-- 4. The fast path is written once, below, and placed into check_one, check_token, check_tokens
--    (one resource), check_tokens_if_written (one resource) and fence() (behind check_tokens of
--    several resources and the protected tables' triggers); each body is derived from the catalog,
--    and the migration fails if a body is not the one it expects. fence() keeps V10's FOR SHARE
--    read for external resources under READ COMMITTED; everything else not accepted goes to
--    fence_full(), as before.
-- 5. Lock order, everywhere: an acquisition takes its lease row, then the name key exclusively,
--    then the resource row; a check takes the name key (shared) before any row lock of that
--    resource, and a key it already holds is granted again without waiting. REPEATABLE READ and
--    SERIALIZABLE checks take no advisory lock (the isolation test comes before the lock): they
--    keep V10's FOR SHARE.
-- 6. The lock and the read run in a subtransaction (a PL/pgSQL block with an EXCEPTION clause, about
--    9k instructions of the ~30k saved): a strict resource's check rolls it back, so it holds its
--    row (fence_full's UPDATE) and no advisory lock, as since V10 (LeaseAtTheFloorAttackTest). Any
--    other check the fast path does not accept keeps the share lock, which only makes a handover
--    of that name (or of a name with the same hash) wait for its transaction, and goes to the full
--    path. An accepted check's lock passes to the enclosing (sub)transaction: ROLLBACK TO
--    SAVEPOINT releases it (hazard 8).

LOCK TABLE ${flyway:defaultSchema}.resource IN ACCESS EXCLUSIVE MODE;

-- The advisory key of a resource id: the key of its name (see the head, 1 and 2). Not inlined (it
-- reads a table); it runs in the calling statement's snapshot, which saw the row.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.advisory_key(p_id bigint)
    RETURNS integer
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT pg_catalog.hashtext(r.name) FROM ${flyway:defaultSchema}.resource r WHERE r.id OPERATOR(pg_catalog.=) p_id
$$;

DO $migration$
DECLARE
    v_space constant integer := (
        SELECT pg_catalog.substring(pg_catalog.pg_get_expr(d.adbin, d.adrelid), '^-?[0-9]+')::integer
          FROM pg_catalog.pg_attrdef d
          JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE d.adrelid = '${flyway:defaultSchema}.resource'::pg_catalog.regclass AND a.attname = 'lock_space');
    -- The fast path of one (p_resource, p_token), written once. @ACCEPTED@ is what the function
    -- returns when it accepts; the function declares v_id, v_mark, v_strict and v_accepted.
    -- REPEATABLE READ and SERIALIZABLE do not enter it (no advisory lock). A NULL resource takes no
    -- lock (the lock function is strict) and goes to the full path, which refuses it.
    v_fast constant text := $fast$
    IF p_token > 0 AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        BEGIN -- a subtransaction: a strict resource's check leaves its lock behind (see the head, 6)
            IF pg_catalog.pg_advisory_xact_lock_shared(@SPACE@ /* key space */, pg_catalog.hashtext(p_resource)) IS NOT NULL THEN
                -- hazard 7: the read that decides is a later statement than the lock (its READ
                -- COMMITTED snapshot is taken after the lock was granted)
                SELECT r.id, r.has_protected, r.strict_mode,
                       r.max_seen = p_token AND r.issuer = 'local' AND r.lock_space = @SPACE@ /* key space */
                  INTO v_id, v_mark, v_strict, v_accepted
                  FROM ${flyway:defaultSchema}.resource r
                 WHERE r.name = p_resource;
                IF v_strict THEN
                    RAISE no_data_found; -- rolls the lock back: a strict check holds its row (V10)
                END IF;
            END IF;
        EXCEPTION WHEN no_data_found THEN
            v_accepted := false;
        END;
        IF v_accepted THEN
            IF v_mark THEN
                PERFORM ${flyway:defaultSchema}.mark_checked(v_id, p_token);
            END IF;
            RETURN @ACCEPTED@;
        END IF;
    END IF;
$fast$;
    v_declare constant text := $declare$
    v_id bigint;
    v_mark boolean;
    v_strict boolean;
    v_accepted boolean;
$declare$;
    -- what V19 placed into the four API functions (check_one: V21, from check_token)
    v_old_fast constant text := $fast$
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        -- The advisory lock is taken only for the row that passes the WHERE (a scan's target list
        -- is evaluated for rows that pass its quals).
        SELECT r.id, r.lock_space, r.ctid,
               pg_advisory_xact_lock_shared(r.lock_space, ${flyway:defaultSchema}.advisory_key(r.id)) IS NOT NULL
          INTO v_id, v_space, v_ctid, v_locked
          FROM ${flyway:defaultSchema}.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode;
        IF FOUND THEN
            -- hazard 7: the read that decides is a later statement than the lock; the version the
            -- lookup found, still visible, still the current token, in the key space locked
            SELECT r.has_protected INTO v_mark
              FROM ${flyway:defaultSchema}.resource r
             WHERE r.ctid = v_ctid AND r.id = v_id AND r.max_seen = p_token AND r.lock_space = v_space;
            IF FOUND THEN
                IF v_mark THEN
                    PERFORM ${flyway:defaultSchema}.mark_checked(v_id, p_token);
                END IF;
                RETURN @ACCEPTED@;
            END IF;
        END IF;
    END IF;
$fast$;
    v_old_declare constant text := $declare$
    v_id bigint;
    v_space integer;
    v_ctid tid;
    v_locked boolean;
    v_mark boolean;
$declare$;
    -- fence(): V10's body
    v_old_fence constant text := $fence$
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
$fence$;
    f record;
    v_oid pg_catalog.oid;
    v_src text;
    v_def text;
    v_old text;
BEGIN
    IF v_space IS NULL THEN
        RAISE EXCEPTION 'V28: the default of resource.lock_space is not an integer';
    END IF;
    FOR f IN SELECT * FROM (VALUES ('check_one(text,bigint)', '0'),
                                   ('check_token(text,bigint)', 'p_token'),
                                   ('check_tokens(text[],bigint[])', '0'),
                                   ('check_tokens_if_written(text[],bigint[])', '0')) AS v(fn, accepted)
    LOOP
        v_oid := ('${flyway:defaultSchema}.' || f.fn)::pg_catalog.regprocedure;
        v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
        v_def := pg_catalog.pg_get_functiondef(v_oid);
        v_old := replace(v_old_fast, '@ACCEPTED@', f.accepted);
        IF (length(v_src) - length(replace(v_src, v_old, ''))) / length(v_old) <> 1
           OR (length(v_src) - length(replace(v_src, v_old_declare, ''))) / length(v_old_declare) <> 1
           OR (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
            RAISE EXCEPTION 'V28: %''s body is not the one this migration derives its new body from', f.fn;
        END IF;
        EXECUTE replace(v_def, v_src,
                        replace(replace(v_src, v_old, replace(replace(v_fast, '@ACCEPTED@', f.accepted),
                                                              '@SPACE@', v_space::text)),
                                v_old_declare, v_declare));
    END LOOP;

    IF (SELECT p.prosrc FROM pg_catalog.pg_proc p
         WHERE p.oid = '${flyway:defaultSchema}.fence(text,bigint)'::pg_catalog.regprocedure) IS DISTINCT FROM v_old_fence THEN
        RAISE EXCEPTION 'V28: fence()''s body is not the one this migration replaces';
    END IF;
    -- fence(): the fast path, then V10's FOR SHARE read for external resources (V6), then the full
    -- path. A local resource the fast path did not accept goes to fence_full(), which decides on
    -- the row lock (V10 tried its own fast path again first).
    EXECUTE replace(replace(replace($create$
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
@DECLARE@
BEGIN
@FAST@
    IF p_token > 0 AND pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN
        -- External resources (V6): FOR SHARE; a row updated meanwhile is re-checked (EvalPlanQual)
        SELECT r.id, r.has_protected INTO v_id, v_mark
          FROM ${flyway:defaultSchema}.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'external' AND NOT r.strict_mode
           FOR SHARE;
        IF FOUND THEN
            IF v_mark THEN
                PERFORM ${flyway:defaultSchema}.mark_checked(v_id, p_token);
            END IF;
            RETURN false;
        END IF;
    END IF;
    RETURN ${flyway:defaultSchema}.fence_full(p_resource, p_token);
END
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', 'false')), '@SPACE@', v_space::text);
END
$migration$;

-- try_acquire: V27's, its handover without waiting keyed by the name (the one edit; its waiting
-- handover calls lock_for_advance(id, space), whose advisory_key(id) is now the name's key).
DO $migration$
DECLARE
    v_old constant text := 'pg_try_advisory_xact_lock(v_space, ${flyway:defaultSchema}.advisory_key(r.id))';
    v_new constant text := 'pg_try_advisory_xact_lock(v_space, pg_catalog.hashtext(p_resource))';
    v_def text := pg_catalog.pg_get_functiondef(
        '${flyway:defaultSchema}.try_acquire(text,text,interval,interval)'::pg_catalog.regprocedure);
BEGIN
    IF (length(v_def) - length(replace(v_def, v_old, ''))) / length(v_old) <> 1 THEN
        RAISE EXCEPTION 'V28: try_acquire''s body is not the one this migration derives its new body from';
    END IF;
    EXECUTE replace(v_def, v_old, v_new);
END
$migration$;

-- set_advisory_key_space runs as the owner role and replaces the owner's functions (CREATE OR
-- REPLACE needs CREATE on the schema). A deployer that is not a superuser gave the owner role that
-- privilege before V1 already (beforeEachMigrate: a new owner needs it); a superuser's deployment
-- did not need to, until now.
DO $migration$
BEGIN
    IF NOT pg_catalog.has_schema_privilege('${owner_role}', '${flyway:defaultSchema}', 'CREATE') THEN
        EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA %I TO %I', '${flyway:defaultSchema}', '${owner_role}');
    END IF;
END
$migration$;

-- set_advisory_key_space(space): V10's, and the fast path's constant rewritten with it (see the
-- head, 3). The rows, the column default and the five functions change under the same ACCESS
-- EXCLUSIVE lock, in one transaction.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.set_advisory_key_space(p_space integer)
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_previous integer;
    v_function regprocedure;
    v_def text;
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
    FOREACH v_function IN ARRAY ARRAY['${flyway:defaultSchema}.check_one(text,bigint)',
                                      '${flyway:defaultSchema}.check_token(text,bigint)',
                                      '${flyway:defaultSchema}.check_tokens(text[],bigint[])',
                                      '${flyway:defaultSchema}.check_tokens_if_written(text[],bigint[])',
                                      '${flyway:defaultSchema}.fence(text,bigint)']::regprocedure[]
    LOOP
        v_def := pg_get_functiondef(v_function);
        IF (SELECT count(*) FROM regexp_matches(v_def, '-?[0-9]+ /\* key space \*/', 'g')) <> 2 THEN
            RAISE EXCEPTION 'fencing: % does not carry the key space where set_advisory_key_space expects it', v_function;
        END IF;
        EXECUTE regexp_replace(v_def, '-?[0-9]+ /\* key space \*/', p_space || ' /* key space */', 'g');
    END LOOP;
    RETURN v_previous;
END
$$;

-- catalog_fingerprint(): V12's, reading the fast path's key space constant as 0 (see the head, 3).
DO $migration$
DECLARE
    v_old constant text := 'md5(pg_get_functiondef(p.oid) ||';
    v_new constant text := 'md5(regexp_replace(pg_get_functiondef(p.oid), ''-?[0-9]+ /\* key space \*/'', ''0 /* key space */'', ''g'') ||';
    v_def text := pg_catalog.pg_get_functiondef('${flyway:defaultSchema}.catalog_fingerprint()'::pg_catalog.regprocedure);
BEGIN
    IF (length(v_def) - length(replace(v_def, v_old, ''))) / length(v_old) <> 1 THEN
        RAISE EXCEPTION 'V28: catalog_fingerprint''s body is not the one this migration derives its new body from';
    END IF;
    EXECUTE replace(v_def, v_old, v_new);
END
$migration$;
