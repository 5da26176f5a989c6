-- protect_rows_per_row(table, column, prefix): per-row resources checked by one row trigger,
-- for tables written by one-row statements (issue 14). V13's form (protect_rows) decides once per
-- statement: cheap per row in bulk (about 1 µs), but a one-row statement pays a WHEN condition
-- prepared per statement, a statement trigger reading its transition table, a lookup of the
-- resource and the owner-only secret, and a SHA-256 (about 20 µs per one-row INSERT, 28 per
-- UPDATE, against 2 and 4 unprotected). This form has no statement trigger and no WHEN:
--
--   fencing_protect   BEFORE INSERT OR UPDATE OR DELETE ... FOR EACH ROW
--                     EXECUTE FUNCTION enforce_row_keyed(column, prefix)
--   fencing_protect_truncate   BEFORE TRUNCATE: refused, as for protect_rows.
--
-- For each row's resource (an UPDATE that moves the row: both), the trigger looks for this
-- transaction's tag of the resource in the transaction-local setting fencing.row_tags
-- (",<resource>:<tag>,"), tag = left(sha256(key1:key2:xid:resource), 32 hex). Found: the row
-- passes. Otherwise V3's full decision (a marker of a passed check with a valid MAC, else a carried
-- token checked by fence() now, else ZF002; ZF004 for an unknown or null resource), and only then
-- the tag is appended. So a resource pays the full decision once per transaction, and every row
-- after it one SECURITY DEFINER call, the row as jsonb, and one SHA-256 (no table access).
--
-- The key: two sequences owned by the owner role, with no privilege for anyone else. A session's
-- first full decision sets both to random values (setval); currval then returns them in this
-- session only (another session's setval does not change this session's currval). The
-- application role cannot call currval, setval, nextval or pg_sequence_last_value on them, nor
-- read them (pg_sequences shows it no last_value), so it cannot compute a tag; a tag names its
-- transaction (xid), so a tag of an earlier transaction is worthless; it is transaction-local, so
-- a ROLLBACK TO SAVEPOINT reverts it with the check's marker and lock (hazard 8). A forged
-- setting gains nothing; a session whose currval was discarded (DISCARD SEQUENCES / ALL) gets a
-- new key at its next full decision, and a tag it kept fails (currval not yet defined): refused.
-- The same tag serves V3's enforce_statement (protect) and V13's enforce_rows (protect_rows): a
-- resource that passed earlier in the transaction passes without the query of the resource and
-- the secret. The list stops growing at 8,000 characters (later resources take the full
-- decision). And mark_checked() (V2) computes the check's marker without marker_mac(), whose
-- parameterised query was planned again in every transaction: the same marker, a third the cost.
-- docs/ARCHITECTURE.md ("One-row statements: the keyed tag (migration V18)") argues it hazard by
-- hazard.

CREATE SEQUENCE ${flyway:defaultSchema}.row_key_1 MINVALUE -9223372036854775808 NO CYCLE;
CREATE SEQUENCE ${flyway:defaultSchema}.row_key_2 MINVALUE -9223372036854775808 NO CYCLE;
ALTER SEQUENCE ${flyway:defaultSchema}.row_key_1 OWNER TO "${owner_role}";
ALTER SEQUENCE ${flyway:defaultSchema}.row_key_2 OWNER TO "${owner_role}";
REVOKE ALL ON SEQUENCE ${flyway:defaultSchema}.row_key_1, ${flyway:defaultSchema}.row_key_2 FROM PUBLIC;

ALTER TABLE ${flyway:defaultSchema}.protected_table
    ADD COLUMN per_row boolean NOT NULL DEFAULT false; -- protect_rows_per_row

CREATE FUNCTION ${flyway:defaultSchema}.enforce_row_keyed()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_tags text := current_setting('fencing.row_tags', true);
    v_new text;
    v_old text;
    v_resource text;
    v_checked text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_ok boolean;
    v_key text;
BEGIN
    IF TG_LEVEL <> 'ROW' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('%s of table %s cannot be fenced: its rows are protected by per-row resources', TG_OP, TG_RELID::regclass),
            jsonb_build_object('resource', NULL, 'token', NULL, 'table', TG_RELID::regclass::text),
            'delete the rows (each under its resource''s token), or have the table owner unprotect the table');
    END IF;
    IF TG_OP <> 'DELETE' THEN
        v_new := TG_ARGV[1] || (to_jsonb(NEW) ->> TG_ARGV[0]);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        v_old := TG_ARGV[1] || (to_jsonb(OLD) ->> TG_ARGV[0]);
    END IF;
    FOREACH v_resource IN ARRAY CASE WHEN TG_OP = 'INSERT' THEN ARRAY[v_new]
                                     WHEN TG_OP = 'DELETE' OR v_old IS NOT DISTINCT FROM v_new THEN ARRAY[v_old]
                                     ELSE ARRAY[v_new, v_old] END
    LOOP
        -- this transaction's tag of the resource (a forged one raises or does not match). Nested:
        -- AND evaluates its second operand when the first is NULL (no setting, a null resource).
        IF strpos(v_tags, ',' || v_resource || ':') > 0 THEN
            IF strpos(v_tags, ',' || v_resource || ':'
                              || left(encode(sha256(convert_to(currval('${flyway:defaultSchema}.row_key_1') || ':'
                                                               || currval('${flyway:defaultSchema}.row_key_2') || ':'
                                                               || pg_current_xact_id() || ':' || v_resource, 'UTF8')), 'hex'), 32)
                              || ',') > 0 THEN
                CONTINUE;
            END IF;
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
        -- passed: the tag, keyed with this session's key (set on the session's first use). The
        -- list stops growing at 8,000 characters (about 150 resources): later resources pay the
        -- full decision at each row, and no search or copy of the list grows with the transaction.
        IF coalesce(length(v_tags), 0) < 8000 THEN
            BEGIN
                v_key := currval('${flyway:defaultSchema}.row_key_1') || ':' || currval('${flyway:defaultSchema}.row_key_2');
            EXCEPTION WHEN object_not_in_prerequisite_state THEN
                v_key := setval('${flyway:defaultSchema}.row_key_1', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint)
                         || ':' || setval('${flyway:defaultSchema}.row_key_2', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint);
            END;
            v_tags := coalesce(nullif(v_tags, ''), ',') || v_resource || ':'
                      || left(encode(sha256(convert_to(v_key || ':' || pg_current_xact_id() || ':' || v_resource, 'UTF8')), 'hex'), 32)
                      || ',';
            PERFORM set_config('fencing.row_tags', v_tags, true);
        END IF;
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

-- protect_rows_per_row(table, column, prefix): as protect_rows (same checks, same errors, same
-- resources), with the keyed row trigger instead of V13's triggers. Re-running protect_rows
-- gives the table V13's form again.
CREATE FUNCTION ${flyway:defaultSchema}.protect_rows_per_row(p_table regclass, p_column text, p_prefix text DEFAULT '')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_name name;
BEGIN
    PERFORM ${flyway:defaultSchema}.protect_rows(p_table, p_column, p_prefix);
    FOR v_name IN SELECT g.tgname FROM pg_trigger g
                   WHERE g.tgrelid = p_table AND NOT g.tgisinternal
                     AND g.tgname IN ('fencing_protect', 'fencing_protect_update', 'fencing_protect_delete',
                                      'fencing_protect_inserted', 'fencing_protect_updated',
                                      'fencing_protect_deleted') LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', v_name, p_table);
    END LOOP;
    EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE ON %s'
                   || ' FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row_keyed(%L, %L)',
                   p_table, p_column, p_prefix);
    UPDATE ${flyway:defaultSchema}.protected_table SET per_row = true WHERE tbl = p_table;
END
$$;

-- Whole-table resources (protect, V3's enforce_statement): the same tag. A statement whose
-- resource passed earlier in the transaction passes on it (no query of the resource and the
-- secret); otherwise V3's decision as before, then the tag.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enforce_statement()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_tags text := current_setting('fencing.row_tags', true);
    v_checked text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_key text;
BEGIN
    IF strpos(v_tags, ',' || TG_ARGV[0] || ':') > 0 THEN
        IF strpos(v_tags, ',' || TG_ARGV[0] || ':'
                          || left(encode(sha256(convert_to(currval('${flyway:defaultSchema}.row_key_1') || ':'
                                                           || currval('${flyway:defaultSchema}.row_key_2') || ':'
                                                           || pg_current_xact_id() || ':' || TG_ARGV[0], 'UTF8')), 'hex'), 32)
                          || ',') > 0 THEN
            IF TG_LEVEL = 'ROW' THEN
                RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
            END IF;
            RETURN NULL;
        END IF;
    END IF;
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
    IF coalesce(length(v_tags), 0) < 8000 THEN -- (as in enforce_row_keyed)
        BEGIN
            v_key := currval('${flyway:defaultSchema}.row_key_1') || ':' || currval('${flyway:defaultSchema}.row_key_2');
        EXCEPTION WHEN object_not_in_prerequisite_state THEN
            v_key := setval('${flyway:defaultSchema}.row_key_1', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint)
                     || ':' || setval('${flyway:defaultSchema}.row_key_2', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint);
        END;
        PERFORM set_config('fencing.row_tags',
                           coalesce(nullif(v_tags, ''), ',') || TG_ARGV[0] || ':'
                           || left(encode(sha256(convert_to(v_key || ':' || pg_current_xact_id() || ':' || TG_ARGV[0], 'UTF8')), 'hex'), 32)
                           || ',', true);
    END IF;
    IF TG_LEVEL = 'ROW' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RETURN NULL;
END
$$;

-- Per-row resources, once per statement (protect_rows, V13's enforce_rows): each distinct resource
-- of the statement that passed earlier in the transaction passes on its tag; otherwise V13's
-- decision as before, then the tag.
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
    -- each distinct resource: the first marker entry for it is this transaction's, with a valid MAC
    -- (V3's fast path), else the full decision: a valid marker anywhere, a carried token (checked
    -- now), or refused. In the order of check_tokens, so two statements never wait on each other's
    -- checks in opposite orders.
    FOREACH v_resource IN ARRAY coalesce(v_resources, ARRAY[]::text[]) LOOP
        IF strpos(v_tags, ',' || v_resource || ':') > 0 THEN -- passed earlier in the transaction
            IF v_key IS NULL THEN
                v_key := currval('${flyway:defaultSchema}.row_key_1') || ':' || currval('${flyway:defaultSchema}.row_key_2')
                         || ':' || pg_current_xact_id();
            END IF;
            IF strpos(v_tags, ',' || v_resource || ':'
                              || left(encode(sha256(convert_to(v_key || ':' || v_resource, 'UTF8')), 'hex'), 32)
                              || ',') > 0 THEN
                CONTINUE;
            END IF;
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
        IF coalesce(length(v_tags), 0) < 8000 THEN -- (as in enforce_row_keyed)
            IF v_key IS NULL THEN
                BEGIN
                    v_key := currval('${flyway:defaultSchema}.row_key_1') || ':' || currval('${flyway:defaultSchema}.row_key_2');
                EXCEPTION WHEN object_not_in_prerequisite_state THEN
                    v_key := setval('${flyway:defaultSchema}.row_key_1', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint)
                             || ':' || setval('${flyway:defaultSchema}.row_key_2', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint);
                END;
                v_key := v_key || ':' || pg_current_xact_id();
            END IF;
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

-- mark_checked (V2), the marker a passed check of a protected resource leaves: the same marker,
-- its secret read by a query without parameters and the MAC computed in a PL/pgSQL expression.
-- marker_mac()'s query took parameters and was planned again in every transaction (a custom
-- plan each time: about 30 µs of the check's 50 for a protected resource). Still without a pinned
-- search_path (V6): it runs only under the pinned path of the check or trigger calling it, and
-- nobody else may call it.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.mark_checked(p_resource_id bigint, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_checked text := coalesce(pg_catalog.current_setting('fencing.checked', true), '');
    v_secret text;
    v_entry text;
BEGIN
    SELECT s.secret INTO v_secret FROM ${flyway:defaultSchema}.marker_secret s;
    v_entry := p_resource_id || ':' || p_token || ':'
               || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
                      v_secret || ':' || pg_catalog.pg_current_xact_id() || ':' || p_resource_id || ':' || p_token,
                      'UTF8')), 'hex'), 32);
    IF pg_catalog.strpos(',' || v_checked, ',' || v_entry || ',') = 0 THEN
        PERFORM pg_catalog.set_config('fencing.checked', v_checked || v_entry || ',', true);
    END IF;
END
$$;

ALTER FUNCTION ${flyway:defaultSchema}.enforce_row_keyed() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protect_rows_per_row(regclass, text, text) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.enforce_row_keyed(),
    ${flyway:defaultSchema}.protect_rows_per_row(regclass, text, text)
FROM PUBLIC;
