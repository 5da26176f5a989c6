-- Hostile input the first four migrations let through, found by the bad input catalogue
-- (docs/BAD-INPUT.md); each change names the cases that cover it.
--
--   B49  check_tokens with arrays of different lengths echoed both arrays in its DETAIL: a
--        10^6-element call produced a 9 MB error message (and server log line). The message and
--        DETAIL now carry the lengths only.
--   B50  check_tokens took any number of entries (10^5 entries of one resource held the fence for
--        3.5 s): at most 1000 entries now, far more than a transaction binds.
--   B58  check_tokens accepted two-dimensional arrays (flattened silently); now ZF006.
--   B70  advance_sequence(gap) with a gap that passes the largest bigint failed with a generic
--        22003 "bigint out of range"; now ZF006 naming the largest gap possible.
--   B72, B77  protect()/protect_rows()/unprotect() accepted the fence's own tables: protecting
--        fencing.resource made every create_resource and first acquisition fail (ZF002). Now ZF006.
--
-- Only the functions that change are replaced (CREATE OR REPLACE keeps owner and grants).

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
    SELECT greatest(s.last_value, (SELECT coalesce(max(greatest(max_seen, last_issued)), 0)
                                     FROM ${flyway:defaultSchema}.resource))
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

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.require_table_owner(p_table regclass)
    RETURNS "char" -- relkind
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c pg_class;
BEGIN
    IF p_table IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'table must not be null',
            jsonb_build_object('argument', 'table', 'value', NULL));
    END IF;
    SELECT * INTO c FROM pg_class WHERE oid = p_table;
    IF NOT FOUND OR c.relkind NOT IN ('r', 'p') THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('%s is not a table', p_table),
            jsonb_build_object('argument', 'table', 'value', p_table::text));
    END IF;
    IF c.relnamespace = '${flyway:defaultSchema}'::regnamespace THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('%s is one of the fence''s own tables: only application tables can be protected', p_table),
            jsonb_build_object('argument', 'table', 'value', p_table::text));
    END IF;
    IF c.relispartition THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('%s is a partition: protect its partitioned table', p_table),
            jsonb_build_object('argument', 'table', 'value', p_table::text));
    END IF;
    IF NOT (pg_has_role(current_user, c.relowner, 'USAGE')
            OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('only the owner of %s (%s) or a superuser may protect or unprotect it, not %s',
                   p_table, c.relowner::regrole, current_user),
            jsonb_build_object('argument', 'table', 'value', p_table::text));
    END IF;
    RETURN c.relkind;
END
$$;
