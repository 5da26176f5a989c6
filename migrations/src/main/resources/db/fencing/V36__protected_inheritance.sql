-- Protected tables in an inheritance tree (INHERITS; declarative partitioning was covered by V3/V4).
--
-- PostgreSQL fires only the statement triggers of the table a statement names. So
--  1. UPDATE/DELETE of an unprotected parent changed the rows of a child protected by protect()
--     without any check (the child's statement trigger never fired), and of a child protected by
--     protect_rows() with its early row refusal skipped through a forged fencing.passed (its
--     statement triggers never fired either); the application needs privileges on the parent only;
--  2. a write addressed to an inheritance child of a protected table (rows that its SELECT shows)
--     fired nothing of the parent's: INSERT/UPDATE/DELETE/TRUNCATE of the child, unchecked.
-- Now:
--  - a protected table that has an inheritance parent takes the row-trigger form, as a partitioned
--    table does: protect() a BEFORE ... FOR EACH ROW trigger (enforce_statement) and a TRUNCATE
--    trigger, protect_rows() V3's row trigger (enforce_row, no WHEN, no statement trigger);
--    protect_rows_per_row() is a row trigger already. Row triggers fire for every row written,
--    whichever table the statement names.
--  - protect(), protect_rows() and protect_rows_per_row() of a table protect each of its
--    inheritance descendants the same way (replacing their protection, as running them again
--    does); the caller must own each (else ZF006, nothing changed).
--  - V4's event trigger (where a superuser migrated) protects a table created or attached (ALTER
--    TABLE ... INHERIT) as an inheritance child of a protected table, and gives a protected table
--    that becomes a child the row-trigger form. Without it, run protect() again after such a change.
--  - Tables protected before this migration that are in an inheritance tree are protected again
--    now where the migrating user may (their owner, or a superuser); otherwise a NOTICE names them.
-- (ProtectedInheritanceTest.)

-- the table's inheritance children (not partitions)
CREATE FUNCTION ${flyway:defaultSchema}.inheritance_children(p_table regclass)
    RETURNS SETOF regclass
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT i.inhrelid::regclass
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = p_table AND NOT c.relispartition
     ORDER BY i.inhrelid
$$;

-- whether the table has an inheritance parent (a partition is refused by require_table_owner)
CREATE FUNCTION ${flyway:defaultSchema}.has_inheritance_parent(p_table regclass)
    RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhrelid = p_table AND NOT c.relispartition)
$$;

-- protect_table(): protect()'s body (V3) for one table, the row-trigger form also for a table with
-- an inheritance parent
CREATE FUNCTION ${flyway:defaultSchema}.protect_table(p_table regclass, p_resource text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_kind "char" := ${flyway:defaultSchema}.require_table_owner(p_table);
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    PERFORM ${flyway:defaultSchema}.drop_protection(p_table);
    IF v_kind = 'p' OR ${flyway:defaultSchema}.has_inheritance_parent(p_table) THEN
        -- statement triggers fire only for the table a statement names: not for writes addressed
        -- to a partition, nor for an UPDATE/DELETE of an inheritance parent; row triggers fire for
        -- every row (those of a partitioned table are cloned to every partition, also later ones)
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

-- protect(): the table, then each inheritance child (writes addressed to a child fire none of the
-- parent's triggers), replacing their protection as running protect() again does
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protect(p_table regclass, p_resource text)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_child regclass;
BEGIN
    PERFORM ${flyway:defaultSchema}.protect_table(p_table, p_resource);
    FOR v_child IN SELECT ${flyway:defaultSchema}.inheritance_children(p_table) LOOP
        PERFORM ${flyway:defaultSchema}.protect(v_child, p_resource);
    END LOOP;
END
$$;

-- add_row_triggers(): V3's row trigger also for a table with an inheritance parent (its statement
-- triggers would not fire for an UPDATE/DELETE of the parent)
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.add_row_triggers(p_table regclass, p_column text, p_prefix text)
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
    IF EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = p_table)
       OR ${flyway:defaultSchema}.has_inheritance_parent(p_table) THEN
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

-- protect_rows_table(): protect_rows()'s body for one table; with p_per_row, then
-- protect_rows_per_row()'s (V18)
CREATE FUNCTION ${flyway:defaultSchema}.protect_rows_table(p_table regclass, p_column text, p_prefix text, p_per_row boolean)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_kind "char" := ${flyway:defaultSchema}.require_table_owner(p_table);
    v_name name;
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
    IF p_per_row THEN
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
    END IF;
END
$$;

-- protect_rows(), protect_rows_per_row(): the table, then each inheritance child
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protect_rows(p_table regclass, p_column text, p_prefix text DEFAULT '')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_child regclass;
BEGIN
    PERFORM ${flyway:defaultSchema}.protect_rows_table(p_table, p_column, p_prefix, false);
    FOR v_child IN SELECT ${flyway:defaultSchema}.inheritance_children(p_table) LOOP
        PERFORM ${flyway:defaultSchema}.protect_rows(v_child, p_column, p_prefix);
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protect_rows_per_row(p_table regclass, p_column text, p_prefix text DEFAULT '')
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_child regclass;
BEGIN
    PERFORM ${flyway:defaultSchema}.protect_rows_table(p_table, p_column, p_prefix, true);
    FOR v_child IN SELECT ${flyway:defaultSchema}.inheritance_children(p_table) LOOP
        PERFORM ${flyway:defaultSchema}.protect_rows_per_row(v_child, p_column, p_prefix);
    END LOOP;
END
$$;

-- the protection a protected_table row records, given to one table
CREATE FUNCTION ${flyway:defaultSchema}.protect_table_like(p_table regclass, pt ${flyway:defaultSchema}.protected_table)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pt.resource IS NOT NULL THEN
        PERFORM ${flyway:defaultSchema}.protect_table(p_table, pt.resource);
    ELSE
        PERFORM ${flyway:defaultSchema}.protect_rows_table(p_table, pt.resource_column, pt.prefix, pt.per_row);
    END IF;
END
$$;

-- The table and each of its inheritance descendants, parents first: a protected one that has an
-- inheritance parent and not yet the row-trigger form is protected again as it is (its own
-- resource); an unprotected one is protected like its nearest protected ancestor. No protection is
-- replaced by another. (V4's event trigger after CREATE TABLE ... INHERITS / ALTER TABLE ...
-- INHERIT, and this migration for what was protected before it.)
CREATE FUNCTION ${flyway:defaultSchema}.protect_in_tree(p_table regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d record;
    pt ${flyway:defaultSchema}.protected_table;
BEGIN
    FOR d IN WITH RECURSIVE tree(rel, depth) AS (
                 SELECT p_table::oid, 0
                 UNION
                 SELECT i.inhrelid, t.depth + 1
                   FROM tree t JOIN pg_inherits i ON i.inhparent = t.rel
                   JOIN pg_class c ON c.oid = i.inhrelid
                  WHERE NOT c.relispartition)
             SELECT tree.rel::regclass AS rel, max(tree.depth) AS depth FROM tree GROUP BY tree.rel ORDER BY 2, 1
    LOOP
        CONTINUE WHEN NOT ${flyway:defaultSchema}.has_inheritance_parent(d.rel);
        SELECT t.* INTO pt FROM ${flyway:defaultSchema}.protected_table t WHERE t.tbl = d.rel;
        IF FOUND THEN
            IF NOT EXISTS (SELECT FROM pg_trigger g
                            WHERE g.tgrelid = d.rel AND g.tgname = 'fencing_protect'
                              AND (g.tgtype & 1) = 1 /* FOR EACH ROW */ AND g.tgqual IS NULL) THEN
                PERFORM ${flyway:defaultSchema}.protect_table_like(d.rel, pt);
            END IF;
            CONTINUE;
        END IF;
        -- the nearest protected ancestor (the walk up stops at a protected table)
        WITH RECURSIVE up(rel, depth, seq) AS (
            SELECT i.inhparent, 1, i.inhseqno FROM pg_inherits i WHERE i.inhrelid = d.rel
            UNION
            SELECT i.inhparent, up.depth + 1, i.inhseqno
              FROM up JOIN pg_inherits i ON i.inhrelid = up.rel
             WHERE NOT EXISTS (SELECT FROM ${flyway:defaultSchema}.protected_table t WHERE t.tbl = up.rel))
        SELECT t.* INTO pt
          FROM up JOIN ${flyway:defaultSchema}.protected_table t ON t.tbl = up.rel
         ORDER BY up.depth, up.seq, up.rel
         LIMIT 1;
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.protect_table_like(d.rel, pt);
        END IF;
    END LOOP;
END
$$;

ALTER FUNCTION ${flyway:defaultSchema}.inheritance_children(regclass) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.has_inheritance_parent(regclass) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protect_table(regclass, text) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protect_rows_table(regclass, text, text, boolean) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protect_table_like(regclass, ${flyway:defaultSchema}.protected_table) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.protect_in_tree(regclass) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.inheritance_children(regclass),
    ${flyway:defaultSchema}.has_inheritance_parent(regclass),
    ${flyway:defaultSchema}.protect_table(regclass, text),
    ${flyway:defaultSchema}.protect_rows_table(regclass, text, text, boolean),
    ${flyway:defaultSchema}.protect_table_like(regclass, ${flyway:defaultSchema}.protected_table),
    ${flyway:defaultSchema}.protect_in_tree(regclass)
    FROM PUBLIC;

-- V4's event trigger (V17's), plus inheritance: a table created or attached as a child of a
-- protected table is protected like it; a protected table that becomes a child is protected again
-- (the row-trigger form). Only a superuser replaces it.
DO $event$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
       AND EXISTS (SELECT FROM pg_catalog.pg_event_trigger WHERE evtname = 'fencing_protect_new_partitions') THEN
        EXECUTE $replace$
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protect_new_partitions()
    RETURNS event_trigger
    LANGUAGE plpgsql SECURITY DEFINER -- runs as the superuser that created it: it must be able
                                      -- to read protected_table and to create triggers on tables
                                      -- it does not own
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cmd record;
    pt ${flyway:defaultSchema}.protected_table;
    part regclass;
BEGIN
    IF TG_TAG IN ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED') THEN
        -- a dropped table protects nothing: its row goes, and table_unprotected clears the flags
        DELETE FROM ${flyway:defaultSchema}.protected_table t
         WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = t.tbl);
        RETURN;
    END IF;
    FOR cmd IN SELECT DISTINCT objid FROM pg_event_trigger_ddl_commands()
                WHERE object_type = 'table' AND command_tag IN ('CREATE TABLE', 'ALTER TABLE')
    LOOP
        -- ATTACH PARTITION reports the parent, CREATE TABLE ... PARTITION OF the new partition
        FOR pt IN SELECT t.* FROM ${flyway:defaultSchema}.protected_table t
                   WHERE to_regclass(t.tbl::regclass::text) IS NOT NULL
                     AND cmd.objid IN (SELECT relid FROM pg_partition_tree(t.tbl::regclass))
                     AND EXISTS (SELECT FROM pg_partitioned_table WHERE partrelid = t.tbl)
        LOOP
            FOR part IN SELECT relid FROM pg_partition_tree(pt.tbl::regclass)
                         WHERE NOT EXISTS (SELECT FROM pg_trigger g
                                            WHERE g.tgrelid = relid AND g.tgname = 'fencing_protect_truncate')
            LOOP
                EXECUTE format('CREATE TRIGGER fencing_protect_truncate BEFORE TRUNCATE ON %s'
                               || ' FOR EACH STATEMENT EXECUTE FUNCTION ${flyway:defaultSchema}.%I(%s)',
                               part,
                               CASE WHEN pt.resource IS NOT NULL THEN 'enforce_statement' ELSE 'enforce_row' END,
                               CASE WHEN pt.resource IS NOT NULL THEN quote_literal(pt.resource)
                                    ELSE quote_literal(pt.resource_column) || ', ' || quote_literal(pt.prefix) END);
            END LOOP;
        END LOOP;
        -- V36: CREATE TABLE ... INHERITS and ALTER TABLE ... INHERIT report the child
        IF EXISTS (SELECT FROM pg_class c WHERE c.oid = cmd.objid AND c.relkind = 'r') THEN
            PERFORM ${flyway:defaultSchema}.protect_in_tree(cmd.objid::regclass);
        END IF;
    END LOOP;
END
$$;
$replace$;
    ELSE
        RAISE NOTICE 'fencing: no event trigger replaced (not a superuser, or none exists): after creating or attaching an inheritance child of a protected table (INHERITS), or making a protected table one, run protect() again on the protected table';
    END IF;
END
$event$;

-- Tables protected before this migration that are in an inheritance tree: the row-trigger form
-- where they have a parent, and their descendants protected like them, where the migrating user
-- may (protect_in_tree: no protection is replaced by another).
DO $upgrade$
DECLARE
    v_table regclass;
BEGIN
    FOR v_table IN SELECT t.tbl::regclass FROM ${flyway:defaultSchema}.protected_table t
                    JOIN pg_class c ON c.oid = t.tbl
                   WHERE c.relkind = 'r'
                     AND (${flyway:defaultSchema}.has_inheritance_parent(t.tbl::regclass)
                          OR EXISTS (SELECT ${flyway:defaultSchema}.inheritance_children(t.tbl::regclass)))
                   ORDER BY t.tbl
    LOOP
        BEGIN
            PERFORM ${flyway:defaultSchema}.protect_in_tree(v_table);
        EXCEPTION WHEN SQLSTATE 'ZF006' OR insufficient_privilege THEN
            RAISE NOTICE 'fencing: % is protected and in an inheritance tree, and % may not protect it or its children: writes through its parent or to its children are not checked until its owner runs fencing.protect (or protect_rows) on it again (README, "Protected tables")',
                v_table, current_user;
        END;
    END LOOP;
END
$upgrade$;
