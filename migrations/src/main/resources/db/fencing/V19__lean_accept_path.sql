-- The accept path with less executor work per check (issue 14, one hot resource). Nothing is decided
-- differently from V15: the common check (READ COMMITTED, a local non-strict resource, token =
-- max_seen) takes the resource's advisory share lock in the target list of the row's lookup, then
-- decides on a read in a later statement (hazard 7), and leaves the marker only for a resource that
-- protects a table. What a one-token check costs was measured with callgrind on one backend
-- (docs/ARCHITECTURE.md, "Where a fenced transaction's time goes"): about 147,000 instructions per
-- call, and neither the hot resource nor its lock was where they went. PL/pgSQL prepares every
-- expression of the function once per transaction (its simple-expression state is per
-- transaction; each function call in it costs an EXECUTE privilege check and an fmgr lookup), and
-- every SQL statement builds its executor state per execution. V15's one-resource path evaluated
-- eleven expressions with about twenty function calls before and around its two statements, and
-- its second statement was an index scan. Here:
--
-- 1. The one-element shape is one comparison per array, array_dims(a) = '[1:1]', and the element
--    is a[1]. An array of one element with another lower bound is left to the path below, which
--    decides it as V15 did (fence()). The counts check_tokens validates are computed only on that
--    path.
-- 2. The decisive re-read fetches the row version the first statement found by its ctid (a TID
--    scan: no index descent), and requires the same id, max_seen = the token and the same key
--    space, visible to its own snapshot, taken after the lock was granted. id is the primary key,
--    and a snapshot sees at most one version of a row, so a version found is the current one, as
--    V15's read by id found it. A version updated since (an acquisition that committed before the
--    lock was granted, a strict-mode or has_protected change, a new key space) is not visible to
--    the later snapshot, or its line pointer now holds another row's tuple (pruned and reused:
--    another id): nothing is found, and the check goes where V15 sent every check its fast path did
--    not accept (fence(), per resource), which decides again on the current row. A check that
--    only lost its ctid is slower once, never decided differently.
-- 3. The accept test is the second statement's WHERE (FOUND), not an expression over its result.
--
-- REPEATABLE READ, SERIALIZABLE, strict and external resources, several resources and bad input go
-- exactly where they went in V15. LeanAcceptPathTest forces the interleaving the re-read exists for:
-- a check whose first statement saw the old token, waiting on the lock behind the acquisition.

DO $migration$
DECLARE
    -- The fast path of one (p_resource, p_token). @ACCEPTED@ is what the function returns when it
    -- accepts; the function declares v_id, v_space, v_ctid, v_locked and v_mark.
    v_fast constant text := $fast$
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
    v_declare constant text := $declare$
    v_id bigint;
    v_space integer;
    v_ctid tid;
    v_locked boolean;
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

    -- check_tokens: one resource (lower bound 1) takes the fast path; otherwise V15's path, which
    -- is V10's body.
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
    v_resources integer;
    v_tokens integer;
BEGIN
    IF array_dims(p_resources) = '[1:1]' AND array_dims(p_tokens) = '[1:1]' THEN
        p_resource := p_resources[1];
        p_token := p_tokens[1];
@FAST@
    END IF;
    v_resources := coalesce(array_length(p_resources, 1), 0);
    v_tokens := coalesce(array_length(p_tokens, 1), 0);
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
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', '0'));

    -- check_tokens_if_written: no check when the transaction wrote nothing (V11); one resource
    -- (lower bound 1) takes the fast path; otherwise check_tokens.
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
    IF array_dims(p_resources) = '[1:1]' AND array_dims(p_tokens) = '[1:1]' THEN
        p_resource := p_resources[1];
        p_token := p_tokens[1];
@FAST@
    END IF;
    RETURN ${flyway:defaultSchema}.check_tokens(p_resources, p_tokens);
END
$$
$create$, '@DECLARE@', v_declare), '@FAST@', replace(v_fast, '@ACCEPTED@', '0'));
END
$migration$;
