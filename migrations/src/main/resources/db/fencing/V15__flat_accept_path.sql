-- The accept path flattened (issue 14). Nothing is decided differently from V10: the common check
-- (READ COMMITTED, a local non-strict resource, token = max_seen: every fenced transaction of a
-- lease holder) runs V10's fast path — the advisory share lock in the target list of the row's
-- lookup, max_seen read again in a later statement (hazard 7), the marker only for a resource
-- that protects a table — but inside the API function the application calls, instead of three
-- PL/pgSQL calls deep (check_tokens_if_written -> check_tokens -> fence). Each nested call cost
-- a PL/pgSQL function entry, and each SECURITY DEFINER level its search_path switch.
--
-- check_tokens (one resource), check_token and check_tokens_if_written (one resource) carry the
-- same two statements, written once below and placed into each function by this migration. Their
-- plans are cached for the session like any PL/pgSQL statement's (no dynamic SQL in the functions;
-- the EXECUTE is this migration's, once). Anything the fast path does not accept — another
-- isolation level, a strict or external resource, a token not equal to max_seen, several
-- resources, bad input, a changed key space, a row gone — goes exactly where it went before:
-- fence() per resource, in check_tokens' order, which decides as V10 did (fence_full() for
-- everything that is not its own fast path). A fast path that took the share lock and then does
-- not accept leaves the lock to the full path, as V10's fence() did. docs/ARCHITECTURE.md ("The
-- accept path at the floor") argues it hazard by hazard.
--
-- External resources no longer take the fast path's first statement: their check goes straight
-- to fence(), whose V6 FOR SHARE read is unchanged.

DO $migration$
DECLARE
    -- The fast path of one (p_resource, p_token). @ACCEPTED@ is what the function returns when it
    -- accepts; the function declares v_id, v_space, v_locked, v_accepted and v_mark.
    v_fast constant text := $fast$
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        -- The advisory lock is taken only for the row that passes the WHERE (a scan's target list
        -- is evaluated for rows that pass its quals).
        SELECT r.id, r.lock_space,
               pg_advisory_xact_lock_shared(r.lock_space, ${flyway:defaultSchema}.advisory_key(r.id)) IS NOT NULL
          INTO v_id, v_space, v_locked
          FROM ${flyway:defaultSchema}.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode;
        IF FOUND THEN
            -- hazard 7: the read that decides is a later statement than the lock
            SELECT r.max_seen = p_token AND r.lock_space = v_space, r.has_protected
              INTO v_accepted, v_mark
              FROM ${flyway:defaultSchema}.resource r WHERE r.id = v_id;
            IF v_accepted THEN
                IF v_mark THEN
                    PERFORM ${flyway:defaultSchema}.mark_checked(v_id, p_token);
                END IF;
                RETURN @ACCEPTED@;
            END IF;
        END IF;
    END IF;
$fast$;
    v_declare constant text := $declare$
    v_id bigint;
    v_space integer;
    v_locked boolean;
    v_accepted boolean;
    v_mark boolean;
$declare$;
BEGIN
    EXECUTE replace(replace($create$
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_token(p_resource text, p_token bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
@DECLARE@
BEGIN
@FAST@
    PERFORM ${flyway:defaultSchema}.fence(p_resource, p_token);
    RETURN p_token;
END
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', 'p_token'));

    -- check_tokens: one resource takes the fast path; otherwise V10's body unchanged.
    EXECUTE replace(replace($create$
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_tokens(p_resources text[], p_tokens bigint[])
    RETURNS integer -- how many resources this call advanced
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
@DECLARE@
    p_resource text;
    p_token bigint;
    pair record;
    advanced integer := 0;
    v_resources integer := coalesce(array_length(p_resources, 1), 0);
    v_tokens integer := coalesce(array_length(p_tokens, 1), 0);
BEGIN
    IF v_resources = 1 AND v_tokens = 1 AND array_ndims(p_resources) = 1 AND array_ndims(p_tokens) = 1 THEN
        -- one resource (every transaction that binds one): nothing to order
        p_resource := p_resources[array_lower(p_resources, 1)];
        p_token := p_tokens[array_lower(p_tokens, 1)];
@FAST@
        RETURN ${flyway:defaultSchema}.fence(p_resource, p_token)::integer;
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
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', '0'));

    -- check_tokens_if_written: no check when the transaction wrote nothing (V11); one resource
    -- takes the fast path; otherwise check_tokens.
    EXECUTE replace(replace($create$
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_tokens_if_written(p_resources text[], p_tokens bigint[])
    RETURNS integer -- NULL when the transaction wrote nothing (no check); else as check_tokens
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
@DECLARE@
    p_resource text;
    p_token bigint;
BEGIN
    IF pg_current_xact_id_if_assigned() IS NULL THEN
        RETURN NULL;
    END IF;
    IF array_length(p_resources, 1) = 1 AND array_length(p_tokens, 1) = 1
       AND array_ndims(p_resources) = 1 AND array_ndims(p_tokens) = 1 THEN
        p_resource := p_resources[array_lower(p_resources, 1)];
        p_token := p_tokens[array_lower(p_tokens, 1)];
@FAST@
    END IF;
    RETURN ${flyway:defaultSchema}.check_tokens(p_resources, p_tokens);
END
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', '0'));
END
$migration$;
