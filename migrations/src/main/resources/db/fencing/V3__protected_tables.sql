-- Protected tables: the database itself refuses unfenced writes, from any client.
--
-- fencing.protect(table, resource) / fencing.protect_rows(table, column, prefix) put triggers on an
-- application table; every INSERT, UPDATE, DELETE, TRUNCATE (and COPY FROM) must then run in a
-- transaction that passed the fence for the table's resource (or for each row's resource):
--   * check_token / check_tokens (what FencedDataSource calls) leave a marker of the passed check (V2)
--     in the transaction-local setting fencing.checked: "<resource id>:<token>:<mac>,"
--     The MAC binds the marker to a secret only the owner role can read and to the transaction id,
--     so a client cannot forge one with set_config. A ROLLBACK TO SAVEPOINT that undoes a check
--     reverts its marker together with its row lock.
--   * fencing.carry(resource, token) carries a token in the transaction-local setting
--     fencing.tokens; the first protected write then runs the check itself.
--   * otherwise the write is refused: ZF002 missing token.
-- The check runs once per transaction and resource: afterwards the marker exists.
--
-- Who bypasses by design: superusers and the table's owner (DISABLE TRIGGER, DROP TRIGGER,
-- session_replication_role = replica), logical replication apply, pg_restore --disable-triggers.
-- The application's login role must therefore neither own protected tables nor be a superuser.

-- The protected tables, for operators; the triggers are what enforces.
CREATE TABLE ${flyway:defaultSchema}.protected_table (
    tbl             oid         PRIMARY KEY,
    table_name      text        NOT NULL,
    resource        text,       -- whole-table resource (protect)
    resource_column text,       -- per-row resources (protect_rows): prefix || column value
    prefix          text,
    protected_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((resource IS NULL) <> (resource_column IS NULL)),
    CHECK ((resource_column IS NULL) = (prefix IS NULL))
);

ALTER TABLE ${flyway:defaultSchema}.protected_table OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.protected_table FROM PUBLIC;

-- carry(resource, token): carries a token for the rest of the transaction without checking it
-- yet; the first write to a table protected by the resource checks it. Same input errors as
-- check_token.
CREATE FUNCTION ${flyway:defaultSchema}.carry(p_resource text, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    PERFORM set_config('fencing.tokens',
                       coalesce(current_setting('fencing.tokens', true), '') || p_resource || ' ' || p_token || ',',
                       true);
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Enforcement (trigger functions)
-- ---------------------------------------------------------------------------------------------

-- Passes when this transaction passed the fence for p_resource; else checks a carried token;
-- else refuses with ZF002. Fails closed: unknown or malformed resources raise ZF004.
CREATE FUNCTION ${flyway:defaultSchema}.require_fenced(p_resource text, p_table regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
    v_tokens text;
    v_pos int;
    v_token text;
BEGIN
    IF p_resource IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('a write to protected table %s has no fencing resource (the resource column is null)', p_table),
            jsonb_build_object('resource', NULL, 'table', p_table::text));
    END IF;
    SELECT id INTO v_id FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('unknown fencing resource "%s" protecting table %s', p_resource, p_table),
            jsonb_build_object('resource', p_resource, 'table', p_table::text),
            'a resource exists once a lease on it was acquired, or after create_resource()');
    END IF;
    IF ${flyway:defaultSchema}.is_checked(v_id) THEN
        RETURN;
    END IF;
    v_tokens := current_setting('fencing.tokens', true);
    IF v_tokens IS NOT NULL AND v_tokens <> '' THEN
        v_pos := position(',' || p_resource || ' ' IN ',' || v_tokens);
        IF v_pos > 0 THEN
            v_token := split_part(split_part(substr(v_tokens, v_pos), ',', 1), ' ', 2);
        END IF;
    END IF;
    IF v_token IS NULL OR v_token !~ '^[0-9]{1,19}$' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('missing fencing token for resource "%s": table %s is protected', p_resource, p_table),
            jsonb_build_object('resource', p_resource, 'token', NULL, 'table', p_table::text),
            'call fencing.check_token(resource, token) (or fencing.carry) in the transaction before writing');
    END IF;
    PERFORM ${flyway:defaultSchema}.fence(p_resource, v_token::bigint); -- leaves the marker
END
$$;

-- Both trigger functions first try the fast path inline (one query, one sha256, no further
-- function calls: this runs for every row of a row trigger): a valid marker of this transaction
-- for the resource. Anything else goes to require_fenced(), which checks a carried token or refuses.

-- Whole-table resource: TG_ARGV[0] is the resource. Statement trigger (also TRUNCATE), or row
-- trigger on partitioned tables.
CREATE FUNCTION ${flyway:defaultSchema}.enforce_statement()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_checked text := current_setting('fencing.checked', true);
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
BEGIN
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
    IF TG_LEVEL = 'ROW' THEN
        RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RETURN NULL;
END
$$;

-- Per-row resources: TG_ARGV[0] is the column, TG_ARGV[1] the prefix. An UPDATE that moves a row
-- to another resource needs both.
CREATE FUNCTION ${flyway:defaultSchema}.enforce_row()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_checked text := current_setting('fencing.checked', true);
    v_new text;
    v_old text;
    v_resource text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_passed boolean;
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
        v_passed := false;
        IF v_checked <> '' AND v_resource IS NOT NULL THEN
            SELECT r.id, s.secret INTO v_id, v_secret
              FROM ${flyway:defaultSchema}.resource r, ${flyway:defaultSchema}.marker_secret s
             WHERE r.name = v_resource;
            v_pos := position(',' || v_id || ':' IN ',' || v_checked);
            IF v_pos > 0 THEN
                v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
                v_passed := v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':'
                                                                       || v_id || ':' || v_parts[2], 'UTF8')), 'hex'), 32);
            END IF;
        END IF;
        IF v_passed IS NOT TRUE THEN
            PERFORM ${flyway:defaultSchema}.require_fenced(v_resource, TG_RELID::regclass);
            v_checked := current_setting('fencing.checked', true); -- it may have a new marker now
        END IF;
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Operator commands (not granted to the application role)
-- ---------------------------------------------------------------------------------------------

-- Raises ZF004 unless the table exists and the caller may put triggers on it (owner or superuser).
CREATE FUNCTION ${flyway:defaultSchema}.require_table_owner(p_table regclass)
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

-- Drops the fence's triggers from the table and its partitions (no-op where there are none).
CREATE FUNCTION ${flyway:defaultSchema}.drop_protection(p_table regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regclass;
BEGIN
    -- (dropping the row trigger of a partitioned table drops its clones on the partitions)
    IF EXISTS (SELECT FROM pg_trigger WHERE tgrelid = p_table AND tgname = 'fencing_protect') THEN
        EXECUTE format('DROP TRIGGER fencing_protect ON %s', p_table);
    END IF;
    FOR t IN SELECT g.tgrelid FROM pg_trigger g
              WHERE g.tgname = 'fencing_protect_truncate'
                AND g.tgrelid IN (SELECT p_table UNION SELECT relid FROM pg_partition_tree(p_table)) LOOP
        EXECUTE format('DROP TRIGGER fencing_protect_truncate ON %s', t);
    END LOOP;
    DELETE FROM ${flyway:defaultSchema}.protected_table WHERE tbl = p_table;
END
$$;

-- Adds the TRUNCATE statement trigger to the table and each existing partition.
CREATE FUNCTION ${flyway:defaultSchema}.add_truncate_triggers(p_table regclass, p_function text, p_args text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regclass;
BEGIN
    FOR t IN SELECT p_table UNION SELECT relid FROM pg_partition_tree(p_table) LOOP
        EXECUTE format('CREATE TRIGGER fencing_protect_truncate BEFORE TRUNCATE ON %s'
                       || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.%I(%s)',
                       t, p_function, p_args);
    END LOOP;
END
$$;

-- protect(table, resource): every write to the table needs the resource's current token.
-- Re-running it (e.g. after attaching partitions) re-creates the triggers.
CREATE FUNCTION ${flyway:defaultSchema}.protect(p_table regclass, p_resource text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_kind "char" := ${flyway:defaultSchema}.require_table_owner(p_table);
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    PERFORM ${flyway:defaultSchema}.drop_protection(p_table);
    IF v_kind = 'p' THEN
        -- statement triggers of a partitioned table do not fire for writes addressed to a
        -- partition; row triggers are cloned to every partition, also ones attached later
        EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE ON %s'
                       || ' FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_statement(%L)',
                       p_table, p_resource);
        PERFORM ${flyway:defaultSchema}.add_truncate_triggers(p_table, 'enforce_statement', quote_literal(p_resource));
    ELSE
        EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s'
                       || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_statement(%L)',
                       p_table, p_resource);
    END IF;
    INSERT INTO ${flyway:defaultSchema}.protected_table (tbl, table_name, resource)
    VALUES (p_table, p_table::text, p_resource);
END
$$;

-- protect_rows(table, column, prefix): each row is protected by the resource prefix || column.
CREATE FUNCTION ${flyway:defaultSchema}.protect_rows(p_table regclass, p_column text, p_prefix text DEFAULT '')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_kind "char" := ${flyway:defaultSchema}.require_table_owner(p_table);
BEGIN
    IF p_column IS NULL OR NOT EXISTS (SELECT FROM pg_attribute
                                        WHERE attrelid = p_table AND attname = p_column
                                          AND attnum > 0 AND NOT attisdropped) THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('table %s has no column %s', p_table, coalesce(quote_ident(p_column), 'null')),
            jsonb_build_object('argument', 'column', 'value', p_column));
    END IF;
    IF p_prefix IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'prefix must not be null (use '''')',
            jsonb_build_object('argument', 'prefix', 'value', NULL));
    END IF;
    IF p_prefix <> '' THEN
        PERFORM ${flyway:defaultSchema}.validate_resource_name(p_prefix);
    END IF;
    PERFORM ${flyway:defaultSchema}.drop_protection(p_table);
    EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE ON %s'
                   || ' FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row(%L, %L)',
                   p_table, p_column, p_prefix);
    PERFORM ${flyway:defaultSchema}.add_truncate_triggers(p_table, 'enforce_row',
                                                          quote_literal(p_column) || ', ' || quote_literal(p_prefix));
    INSERT INTO ${flyway:defaultSchema}.protected_table (tbl, table_name, resource_column, prefix)
    VALUES (p_table, p_table::text, p_column, p_prefix);
END
$$;

-- unprotect(table): drops the triggers; true if the table was protected.
CREATE FUNCTION ${flyway:defaultSchema}.unprotect(p_table regclass)
    RETURNS boolean
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_was boolean;
BEGIN
    PERFORM ${flyway:defaultSchema}.require_table_owner(p_table);
    v_was := EXISTS (SELECT FROM ${flyway:defaultSchema}.protected_table WHERE tbl = p_table);
    PERFORM ${flyway:defaultSchema}.drop_protection(p_table);
    RETURN v_was;
END
$$;

DO $owner$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = '${flyway:defaultSchema}'::regnamespace
                AND p.proname NOT IN ('catalog_fingerprint', 'record_catalog_fingerprint')
                AND p.proowner <> '${owner_role}'::regrole
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', f, '${owner_role}');
    END LOOP;
END
$owner$;

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${flyway:defaultSchema} FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${flyway:defaultSchema}.carry(text, bigint) TO "${app_role}";
