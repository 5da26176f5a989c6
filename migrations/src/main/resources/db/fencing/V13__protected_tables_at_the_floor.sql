-- Per-row protected tables checked once per statement (issue 14). V3's protect_rows() put one
-- BEFORE ... FOR EACH ROW trigger on the table: for every row a SECURITY DEFINER call, the row as
-- jsonb, a lookup of the resource and the secret, and a SHA-256. A table that is not partitioned
-- now gets, from protect_rows() and from this migration:
--
--   fencing_protect, fencing_protect_update, fencing_protect_delete
--       BEFORE INSERT / UPDATE / DELETE ... FOR EACH ROW WHEN (<the row's resource is not in
--       fencing.passed>) EXECUTE FUNCTION enforce_row(column, prefix)
--     The refusal before the write, as in V3 (a stale writer is refused before it touches the
--     table's indexes, so it gets ZF001/ZF002, not a unique violation). The WHEN condition is
--     evaluated by the executor, no function call: it reads the transaction-local setting
--     fencing.passed, ",<resource>,<resource>,...", to which enforce_row() adds each resource once
--     it passed (a marker, or a carried token it checked). So the trigger function runs for the
--     first row of each resource in a transaction, not for every row.
--     fencing.passed is only a hint, and the application can write it: it decides nothing.
--   fencing_protect_inserted, fencing_protect_updated, fencing_protect_deleted
--       AFTER INSERT / UPDATE / DELETE ... REFERENCING NEW TABLE / OLD TABLE ... FOR EACH STATEMENT
--       EXECUTE FUNCTION enforce_rows(column, prefix)
--     The decision: every distinct resource of the statement's rows (old and new rows of an
--     UPDATE; read from the transition tables in one query) needs this transaction's valid marker
--     (V2's MAC, the same one as before), else require_fenced() decides as in V3/V8 (a carried token, else ZF002; ZF004 for
--     an unknown or null resource). A refusal aborts the whole statement. The rows are the final
--     ones, after every BEFORE trigger. (Transition tables: AFTER triggers only, one event each.)
--   fencing_protect_truncate   BEFORE TRUNCATE ... FOR EACH STATEMENT, refused (as in V3).
--
-- Partitioned tables keep V3's row trigger (statement triggers of a partitioned table do not fire
-- for writes addressed to a partition, and a partition attached later gets only what is cloned).
-- The row path never skips a check: it has no AFTER trigger behind it.
--
-- Upgrade: the tables protect_rows() protected before this migration get the new triggers here
-- (the migrating user needs to own them or be a superuser, like protect_rows(); where it may not,
-- the table keeps V3's row trigger, which stays correct, and a NOTICE says to run protect_rows()
-- again). docs/ARCHITECTURE.md ("Per-row resources, once per statement") argues it hazard by hazard.

-- ---------------------------------------------------------------------------------------------
-- The row trigger: V3's, and it notes each resource that passed in fencing.passed
-- ---------------------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enforce_row()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_checked text := current_setting('fencing.checked', true);
    v_passed text := coalesce(nullif(current_setting('fencing.passed', true), ''), ',');
    v_new text;
    v_old text;
    v_resource text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_ok boolean;
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
            v_checked := current_setting('fencing.checked', true); -- it may have a new marker now
        END IF;
        -- passed: later rows of this resource skip the call (the WHEN condition of V13's triggers)
        IF position(',' || v_resource || ',' IN v_passed) = 0 THEN
            v_passed := v_passed || v_resource || ',';
            PERFORM set_config('fencing.passed', v_passed, true);
        END IF;
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The statement trigger: every distinct resource of the statement's rows, in one query
-- ---------------------------------------------------------------------------------------------

-- TG_ARGV[0] is the column, TG_ARGV[1] the prefix. The transition tables are fencing_new (INSERT,
-- UPDATE) and fencing_old (UPDATE, DELETE). A statement of up to 255 rows reads the resources
-- with a query planned once per trigger (to_jsonb of each row); a larger one plans a query that
-- reads the column itself, built from the trigger's own arguments (quoted), never from data.
CREATE FUNCTION ${flyway:defaultSchema}.enforce_rows()
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
    END LOOP;
    RETURN NULL;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- protect_rows / drop_protection
-- ---------------------------------------------------------------------------------------------

-- Creates the per-row protection's triggers (not the TRUNCATE ones): V13's form for a table that
-- is not partitioned, V3's row trigger for a partitioned one.
CREATE FUNCTION ${flyway:defaultSchema}.add_row_triggers(p_table regclass, p_column text, p_prefix text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_args text := quote_literal(p_column) || ', ' || quote_literal(p_prefix);
    -- the row's resource not (yet) in fencing.passed, or NULL: call the function. The value as
    -- text (its output function), which for the usual key types (integers, text, uuid) is what
    -- enforce_row() names the resource (to_jsonb(row) ->> column); where it differs, the function
    -- is called for every row: slower, never less safe. (PostgreSQL prepares a WHEN condition
    -- once per statement: the fewer functions in it, the cheaper a one-row statement.)
    v_missing text := 'COALESCE(pg_catalog.strpos(pg_catalog.current_setting(''fencing.passed'', true),'
                      || ' %L OPERATOR(pg_catalog.||) (%s.%I)::pg_catalog.text OPERATOR(pg_catalog.||) '',''),'
                      || ' 0) OPERATOR(pg_catalog.=) 0';
BEGIN
    IF EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = p_table) THEN
        EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE ON %s'
                       || ' FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row(%s)',
                       p_table, v_args);
        RETURN;
    END IF;
    EXECUTE format('CREATE TRIGGER fencing_protect BEFORE INSERT ON %s FOR EACH ROW WHEN (%s)'
                   || ' EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row(%s)',
                   p_table, format(v_missing, ',' || p_prefix, 'NEW', p_column), v_args);
    -- (an UPDATE that moves the row to another resource always calls the function)
    EXECUTE format('CREATE TRIGGER fencing_protect_update BEFORE UPDATE ON %s FOR EACH ROW'
                   || ' WHEN ((OLD.%I)::pg_catalog.text IS DISTINCT FROM (NEW.%I)::pg_catalog.text OR %s)'
                   || ' EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row(%s)',
                   p_table, p_column, p_column, format(v_missing, ',' || p_prefix, 'NEW', p_column), v_args);
    EXECUTE format('CREATE TRIGGER fencing_protect_delete BEFORE DELETE ON %s FOR EACH ROW WHEN (%s)'
                   || ' EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_row(%s)',
                   p_table, format(v_missing, ',' || p_prefix, 'OLD', p_column), v_args);
    EXECUTE format('CREATE TRIGGER fencing_protect_inserted AFTER INSERT ON %s REFERENCING NEW TABLE AS fencing_new'
                   || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_rows(%s)',
                   p_table, v_args);
    EXECUTE format('CREATE TRIGGER fencing_protect_updated AFTER UPDATE ON %s'
                   || ' REFERENCING OLD TABLE AS fencing_old NEW TABLE AS fencing_new'
                   || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_rows(%s)',
                   p_table, v_args);
    EXECUTE format('CREATE TRIGGER fencing_protect_deleted AFTER DELETE ON %s REFERENCING OLD TABLE AS fencing_old'
                   || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.enforce_rows(%s)',
                   p_table, v_args);
END
$$;

-- Drops the fence's triggers from the table and its partitions (no-op where there are none).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.drop_protection(p_table regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regclass;
    v_name name;
BEGIN
    -- (dropping the row trigger of a partitioned table drops its clones on the partitions)
    FOR v_name IN SELECT g.tgname FROM pg_trigger g
                   WHERE g.tgrelid = p_table AND NOT g.tgisinternal
                     AND g.tgname IN ('fencing_protect', 'fencing_protect_update', 'fencing_protect_delete',
                                      'fencing_protect_inserted', 'fencing_protect_updated',
                                      'fencing_protect_deleted') LOOP
        EXECUTE format('DROP TRIGGER %I ON %s', v_name, p_table);
    END LOOP;
    FOR t IN SELECT g.tgrelid FROM pg_trigger g
              WHERE g.tgname = 'fencing_protect_truncate'
                AND g.tgrelid IN (SELECT p_table UNION SELECT relid FROM pg_partition_tree(p_table)) LOOP
        EXECUTE format('DROP TRIGGER fencing_protect_truncate ON %s', t);
    END LOOP;
    DELETE FROM ${flyway:defaultSchema}.protected_table WHERE tbl = p_table;
END
$$;

-- protect_rows(table, column, prefix): each row is protected by the resource prefix || column.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protect_rows(p_table regclass, p_column text, p_prefix text DEFAULT '')
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
    PERFORM ${flyway:defaultSchema}.add_row_triggers(p_table, p_column, p_prefix);
    PERFORM ${flyway:defaultSchema}.add_truncate_triggers(p_table, 'enforce_row',
                                                          quote_literal(p_column) || ', ' || quote_literal(p_prefix));
    INSERT INTO ${flyway:defaultSchema}.protected_table (tbl, table_name, resource_column, prefix)
    VALUES (p_table, p_table::text, p_column, p_prefix);
END
$$;

ALTER FUNCTION ${flyway:defaultSchema}.enforce_rows() OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.add_row_triggers(regclass, text, text) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.enforce_rows(),
    ${flyway:defaultSchema}.add_row_triggers(regclass, text, text)
FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- Upgrade: tables protected by protect_rows() before this migration get the new triggers
-- ---------------------------------------------------------------------------------------------

DO $upgrade$
DECLARE
    pt record;
BEGIN
    FOR pt IN SELECT t.tbl::regclass AS tbl, t.resource_column, t.prefix
                FROM ${flyway:defaultSchema}.protected_table t
                JOIN pg_catalog.pg_class c ON c.oid = t.tbl
               WHERE t.resource_column IS NOT NULL AND c.relkind = 'r'
               ORDER BY t.tbl
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('DROP TRIGGER IF EXISTS fencing_protect ON %s', pt.tbl);
            PERFORM ${flyway:defaultSchema}.add_row_triggers(pt.tbl, pt.resource_column, pt.prefix);
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'fencing: % keeps its per-row trigger of V3 (correct, one check per row): % may not replace its triggers; its owner can run fencing.protect_rows(%L, %L, %L) to check once per statement',
                pt.tbl, current_user, pt.tbl::text, pt.resource_column, pt.prefix;
        END;
    END LOOP;
END
$upgrade$;
