-- EXPERIMENT, not a migration (measured and left out, docs/ARCHITECTURE.md "Protected tables: where a
-- transaction's instructions go"). Apply with mk.sh after V23.
-- Protected tables with less work per statement (issue 14). Nothing is decided differently from
-- V18: a resource passes on this transaction's tag in fencing.row_tags, else on V3's full decision
-- (a marker with a valid MAC, else a carried token checked by fence(), else ZF002; ZF004 for an
-- unknown or null resource), after which the tag is appended. Measured with callgrind per
-- TPC-B-like transaction: most
-- of what the protection cost went to PL/pgSQL preparing expressions. It prepares each expression
-- of a function once per transaction, and compiles a trigger function once per trigger, so a
-- transaction writing four protected tables prepared every expression it ran four times (57 per
-- transaction: each an EXECUTE privilege check and an fmgr lookup per function it calls). Here:
--
-- 1. A statement that passes on its tag evaluates one expression (enforce_row_keyed: three, the
--    row's resources and the tag; enforce_statement: one), instead of eight to ten.
-- 2. The tag's key is read with pg_sequence_last_value() of V18's two owner-only sequences, set
--    once to random values here, instead of a per-session setval() found by trapping currval's
--    error: no EXCEPTION block (a subtransaction per full decision) and no setval() (two WAL
--    records per session). The application may call neither (42501), as before, and cannot read
--    the sequences. A sequence without a value (RESTART by its owner) gives no key: no tag passes
--    and none is written, so every statement takes the full decision.
-- 3. The full decision computes the tag once, compares and appends it; set_config is an assignment
--    (an expression), not a PERFORM (a query through the executor).
--
-- enforce_rows (protect_rows' statement trigger) reads the key the same way; its tags are the
-- same: tag = left(sha256(key1:key2:xid:resource), 32 hex), as in V18.

SELECT pg_catalog.setval('${flyway:defaultSchema}.row_key_1',
                         ('x' || pg_catalog.left(pg_catalog.md5(pg_catalog.gen_random_uuid()::text), 16))::bit(64)::bigint),
       pg_catalog.setval('${flyway:defaultSchema}.row_key_2',
                         ('x' || pg_catalog.left(pg_catalog.md5(pg_catalog.gen_random_uuid()::text), 16))::bit(64)::bigint);

-- protect_rows_per_row's row trigger. The common case is one expression: the row's resource (an
-- UPDATE: the new one, and it must be the old one) has this transaction's tag. Otherwise V18's
-- path: each resource (an UPDATE that moves the row: the new one, then the old one) on its tag,
-- else the full decision, then the tag.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enforce_row_keyed()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_new text := TG_ARGV[1] || (to_jsonb(NEW) ->> TG_ARGV[0]); -- NULL for DELETE (to_jsonb is strict)
    v_old text := TG_ARGV[1] || (to_jsonb(OLD) ->> TG_ARGV[0]); -- NULL for INSERT
    v_tags text;
    v_key text;
    v_tag text;
    v_resource text;
    v_checked text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_ok boolean;
BEGIN
    IF strpos(current_setting('fencing.row_tags', true),
              ',' || CASE WHEN TG_OP = 'DELETE' THEN v_old ELSE v_new END || ':'
              || left(encode(sha256(convert_to(
                     pg_sequence_last_value('${flyway:defaultSchema}.row_key_1'::regclass) || ':'
                     || pg_sequence_last_value('${flyway:defaultSchema}.row_key_2'::regclass) || ':'
                     || pg_current_xact_id() || ':' || CASE WHEN TG_OP = 'DELETE' THEN v_old ELSE v_new END,
                     'UTF8')), 'hex'), 32) || ',') > 0
       AND (TG_OP <> 'UPDATE' OR v_old = v_new) THEN
        IF TG_OP = 'DELETE' THEN
            RETURN OLD;
        END IF;
        RETURN NEW;
    END IF;
    IF TG_LEVEL <> 'ROW' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('%s of table %s cannot be fenced: its rows are protected by per-row resources', TG_OP, TG_RELID::regclass),
            jsonb_build_object('resource', NULL, 'token', NULL, 'table', TG_RELID::regclass::text),
            'delete the rows (each under its resource''s token), or have the table owner unprotect the table');
    END IF;
    v_tags := current_setting('fencing.row_tags', true);
    -- the key of this transaction's tags (NULL without a key: no tag passes, none is written)
    v_key := pg_sequence_last_value('${flyway:defaultSchema}.row_key_1'::regclass) || ':'
             || pg_sequence_last_value('${flyway:defaultSchema}.row_key_2'::regclass) || ':' || pg_current_xact_id();
    FOREACH v_resource IN ARRAY CASE WHEN TG_OP = 'INSERT' THEN ARRAY[v_new]
                                     WHEN TG_OP = 'DELETE' OR v_old IS NOT DISTINCT FROM v_new THEN ARRAY[v_old]
                                     ELSE ARRAY[v_new, v_old] END
    LOOP
        v_tag := v_resource || ':' || left(encode(sha256(convert_to(v_key || ':' || v_resource, 'UTF8')), 'hex'), 32);
        IF strpos(v_tags, ',' || v_tag || ',') > 0 THEN
            CONTINUE;
        END IF;
        -- the full decision: V3's marker check, else require_fenced (a carried token, or refused)
        v_ok := false;
        v_checked := current_setting('fencing.checked', true);
        IF v_checked <> '' AND v_resource IS NOT NULL THEN
            SELECT r.id, s.secret INTO v_id, v_secret
              FROM ${flyway:defaultSchema}.resource r, ${flyway:defaultSchema}.marker_secret s
             WHERE r.name = v_resource;
            v_pos := position(',' || v_id || ':' IN ',' || v_checked);
            IF v_pos > 0 THEN
                v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
                v_ok := v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':'
                                                                   || v_id || ':' || v_parts[2], 'UTF8')), 'hex'), 32);
            END IF;
        END IF;
        IF v_ok IS NOT TRUE THEN
            PERFORM ${flyway:defaultSchema}.require_fenced(v_resource, TG_RELID::regclass);
        END IF;
        -- passed: the tag (the list stops growing at 8,000 characters, as in V18)
        IF v_tag IS NOT NULL AND coalesce(length(v_tags), 0) < 8000 THEN
            v_tags := set_config('fencing.row_tags', coalesce(nullif(v_tags, ''), ',') || v_tag || ',', true);
        END IF;
    END LOOP;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END
$$;

-- protect's statement trigger (a row trigger on partitioned tables): the common case is one
-- expression, the resource's tag; otherwise V18's full decision, then the tag.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enforce_statement()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_tags text;
    v_tag text;
    v_checked text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
BEGIN
    IF strpos(current_setting('fencing.row_tags', true),
              ',' || TG_ARGV[0] || ':'
              || left(encode(sha256(convert_to(
                     pg_sequence_last_value('${flyway:defaultSchema}.row_key_1'::regclass) || ':'
                     || pg_sequence_last_value('${flyway:defaultSchema}.row_key_2'::regclass) || ':'
                     || pg_current_xact_id() || ':' || TG_ARGV[0], 'UTF8')), 'hex'), 32) || ',') > 0 THEN
        IF TG_LEVEL = 'ROW' THEN
            RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        END IF;
        RETURN NULL;
    END IF;
    v_tags := current_setting('fencing.row_tags', true);
    v_tag := TG_ARGV[0] || ':'
             || left(encode(sha256(convert_to(
                    pg_sequence_last_value('${flyway:defaultSchema}.row_key_1'::regclass) || ':'
                    || pg_sequence_last_value('${flyway:defaultSchema}.row_key_2'::regclass) || ':'
                    || pg_current_xact_id() || ':' || TG_ARGV[0], 'UTF8')), 'hex'), 32);
    v_checked := current_setting('fencing.checked', true);
    IF v_checked <> '' THEN
        SELECT r.id, s.secret INTO v_id, v_secret
          FROM ${flyway:defaultSchema}.resource r, ${flyway:defaultSchema}.marker_secret s
         WHERE r.name = TG_ARGV[0];
        v_pos := position(',' || v_id || ':' IN ',' || v_checked);
        IF v_pos > 0 THEN
            v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
            IF v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':' || v_id
                                                          || ':' || v_parts[2], 'UTF8')), 'hex'), 32) THEN
                v_checked := NULL; -- passed
            END IF;
        END IF;
    END IF;
    IF v_checked IS NOT NULL OR v_id IS NULL THEN
        PERFORM ${flyway:defaultSchema}.require_fenced(TG_ARGV[0], TG_RELID::regclass);
    END IF;
    IF v_tag IS NOT NULL AND coalesce(length(v_tags), 0) < 8000 THEN -- (as in enforce_row_keyed)
        v_tags := set_config('fencing.row_tags', coalesce(nullif(v_tags, ''), ',') || v_tag || ',', true);
    END IF;
    IF TG_LEVEL = 'ROW' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RETURN NULL;
END
$$;

-- protect_rows' statement trigger (V13, V18): V18's body, the key read as in pass_resource.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enforce_rows()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_resources text[];
    v_rows bigint;
    v_resource text;
    v_checked text := coalesce(current_setting('fencing.checked', true), '');
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_ok boolean;
    v_tags text := current_setting('fencing.row_tags', true);
    v_key text;
    v_tagged boolean := false;
    v_value text := format('%L || (to_jsonb(t.%I) #>> ''{}'')', TG_ARGV[1], TG_ARGV[0]);
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT TG_ARGV[1] || (to_jsonb(t) ->> TG_ARGV[0]) COLLATE "C"), count(*) INTO v_resources, v_rows
          FROM (SELECT * FROM fencing_new LIMIT 256) t;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT TG_ARGV[1] || (to_jsonb(t) ->> TG_ARGV[0]) COLLATE "C"), count(*) INTO v_resources, v_rows
          FROM (SELECT * FROM fencing_old LIMIT 256) t;
    ELSE -- the old and the new rows: as many of each (two rows per row updated)
        SELECT array_agg(DISTINCT x.resource COLLATE "C"), count(*) / 2 INTO v_resources, v_rows
          FROM (SELECT TG_ARGV[1] || (to_jsonb(t) ->> TG_ARGV[0]) AS resource
                  FROM (SELECT * FROM fencing_new LIMIT 256) t
                UNION ALL
                SELECT TG_ARGV[1] || (to_jsonb(t) ->> TG_ARGV[0])
                  FROM (SELECT * FROM fencing_old LIMIT 256) t) x;
    END IF;
    IF v_rows > 255 THEN -- a large statement: all its rows, the column read directly
        EXECUTE format('SELECT array_agg(DISTINCT x.resource COLLATE "C") FROM (%s) x',
                       CASE TG_OP WHEN 'INSERT' THEN format('SELECT %s AS resource FROM fencing_new t', v_value)
                                  WHEN 'DELETE' THEN format('SELECT %s AS resource FROM fencing_old t', v_value)
                                  ELSE format('SELECT %s AS resource FROM fencing_new t UNION ALL SELECT %s FROM fencing_old t',
                                              v_value, v_value) END)
            INTO v_resources;
    END IF;
    -- the key of this transaction's tags (NULL without a key: no tag passes, none is written)
    v_key := pg_sequence_last_value('${flyway:defaultSchema}.row_key_1'::regclass) || ':'
             || pg_sequence_last_value('${flyway:defaultSchema}.row_key_2'::regclass) || ':' || pg_current_xact_id();
    FOREACH v_resource IN ARRAY coalesce(v_resources, ARRAY[]::text[]) LOOP
        IF strpos(v_tags, ',' || v_resource || ':'
                          || left(encode(sha256(convert_to(v_key || ':' || v_resource, 'UTF8')), 'hex'), 32)
                          || ',') > 0 THEN
            CONTINUE; -- passed earlier in the transaction
        END IF;
        v_ok := false;
        IF v_checked <> '' AND v_resource IS NOT NULL THEN
            SELECT r.id, s.secret INTO v_id, v_secret
              FROM ${flyway:defaultSchema}.resource r, ${flyway:defaultSchema}.marker_secret s
             WHERE r.name = v_resource;
            v_pos := position(',' || v_id || ':' IN ',' || v_checked);
            IF v_pos > 0 THEN
                v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
                v_ok := v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':'
                                                                   || v_id || ':' || v_parts[2], 'UTF8')), 'hex'), 32);
            END IF;
        END IF;
        IF v_ok IS NOT TRUE THEN
            PERFORM ${flyway:defaultSchema}.require_fenced(v_resource, TG_RELID::regclass);
            v_checked := coalesce(current_setting('fencing.checked', true), ''); -- it may have a new marker now
        END IF;
        IF v_key IS NOT NULL AND coalesce(length(v_tags), 0) < 8000 THEN
            v_tags := coalesce(nullif(v_tags, ''), ',') || v_resource || ':'
                      || left(encode(sha256(convert_to(v_key || ':' || v_resource, 'UTF8')), 'hex'), 32) || ',';
            v_tagged := true;
        END IF;
    END LOOP;
    IF v_tagged THEN
        PERFORM set_config('fencing.row_tags', v_tags, true);
    END IF;
    RETURN NULL;
END
$$;

