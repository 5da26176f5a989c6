-- has_protected clears (issue 14). V10 set resource.has_protected when a protected table came to
-- cover a resource, and left it set when the protection went: every later check of the resource
-- paid mark_checked() (a SHA-256 marker and a set_config) for nothing. Now the flag is exactly
-- "some protected table covers this resource" (its exact resource, or the prefix of protect_rows):
--
--   * a row leaving protected_table (unprotect, drop_protection, protect/protect_rows replacing a
--     table's protection, a DELETE by the owner) or changing: a deferred constraint trigger clears,
--     at commit, the flag of each resource the old row covered that no protected table of an
--     existing table covers any more. Deferred, so that protect() replacing a table's protection
--     (drop_protection, then the new row) finds the new row and changes nothing.
--   * a row of a table that was dropped no longer covers anything (protects() ignores it).
--
-- Safety does not rest on the flag: the triggers accept a write only with this transaction's
-- marker (a MAC over the owner-only secret and the transaction id), and the flag decides only
-- whether a check writes one. A flag that is false while a table covers the resource makes that
-- table's writes fail closed (ZF002) for a client that checked: wrong, but never unsafe. So the
-- flag must never be false while a table covers the resource, under every isolation level:
--
--   * Protecting, unprotecting and creating a resource all take the resource table's SHARE ROW
--     EXCLUSIVE lock (V10: protecting; here: unprotecting) or its ROW EXCLUSIVE lock (an INSERT),
--     which conflict: each runs after the other has committed. Under READ COMMITTED each decides
--     in a statement after the lock, so it sees the other's commit.
--   * Under REPEATABLE READ / SERIALIZABLE the snapshot may predate the other's commit. So
--     protecting and unprotecting each update the one row of protection_change, and creating a
--     resource (outside READ COMMITTED) locks it FOR SHARE: a transaction whose snapshot missed a
--     concurrent protect or unprotect gets 40001 (could not serialize) instead of deciding from
--     a stale picture. The operator (or the acquirer) retries.
--
-- Like protecting (V10), clearing writes the resource rows it changes: a REPEATABLE READ check
-- whose snapshot predates that commit is refused as stale (V10's 40001 -> ZF001), as after
-- set_advisory_key_space. Only rows whose flag changes are written.

CREATE TABLE ${flyway:defaultSchema}.protection_change (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    changes bigint  NOT NULL DEFAULT 0
);
INSERT INTO ${flyway:defaultSchema}.protection_change DEFAULT VALUES;
ALTER TABLE ${flyway:defaultSchema}.protection_change OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.protection_change FROM PUBLIC;

-- A protected table covers a resource only while the table exists (DROP TABLE leaves its row).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.protects(p_resource text)
    RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT EXISTS (SELECT FROM ${flyway:defaultSchema}.protected_table t
                    WHERE (t.resource = p_resource
                           OR (t.resource_column IS NOT NULL AND starts_with(p_resource, t.prefix)))
                      AND EXISTS (SELECT FROM pg_class c WHERE c.oid = t.tbl))
$$;

-- A new resource: does a protected table name it already? Outside READ COMMITTED the snapshot may
-- predate a protect that committed while this INSERT waited for its lock: the share lock of the
-- protection_change row refuses that case (40001).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.resource_protected()
    RETURNS trigger
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        PERFORM FROM ${flyway:defaultSchema}.protection_change FOR SHARE;
    END IF;
    NEW.has_protected := ${flyway:defaultSchema}.protects(NEW.name);
    RETURN NEW;
END
$$;

-- A newly protected table: its resources' checks leave markers from now on.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.table_protected()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE ${flyway:defaultSchema}.resource IN SHARE ROW EXCLUSIVE MODE;
    UPDATE ${flyway:defaultSchema}.protection_change SET changes = changes + 1;
    UPDATE ${flyway:defaultSchema}.resource SET has_protected = true
     WHERE NOT has_protected
       AND (name = NEW.resource OR (NEW.resource_column IS NOT NULL AND starts_with(name, NEW.prefix)));
    RETURN NULL;
END
$$;

-- A protection gone or changed (at commit): the resources the old row covered and nothing covers
-- now stop leaving markers.
CREATE FUNCTION ${flyway:defaultSchema}.table_unprotected()
    RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    LOCK TABLE ${flyway:defaultSchema}.resource IN SHARE ROW EXCLUSIVE MODE;
    UPDATE ${flyway:defaultSchema}.protection_change SET changes = changes + 1;
    UPDATE ${flyway:defaultSchema}.resource SET has_protected = false
     WHERE has_protected
       AND (name = OLD.resource OR (OLD.resource_column IS NOT NULL AND starts_with(name, OLD.prefix)))
       AND NOT ${flyway:defaultSchema}.protects(name);
    RETURN NULL;
END
$$;

CREATE TRIGGER table_protected_update AFTER UPDATE ON ${flyway:defaultSchema}.protected_table
    FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.table_protected();
CREATE CONSTRAINT TRIGGER table_unprotected AFTER UPDATE OR DELETE ON ${flyway:defaultSchema}.protected_table
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.table_unprotected();

-- The flags V10 left set after unprotect (and of dropped tables) clear now.
LOCK TABLE ${flyway:defaultSchema}.resource IN SHARE ROW EXCLUSIVE MODE;
UPDATE ${flyway:defaultSchema}.resource SET has_protected = false
 WHERE has_protected AND NOT ${flyway:defaultSchema}.protects(name);

-- Dropping a protected table removes its row (so its resources' flags clear), where V4's event
-- trigger exists: it now also fires for DROP TABLE / SCHEMA / OWNED. Only a superuser replaces
-- it; otherwise (no event trigger, or migrated by a non-superuser) call unprotect() before
-- dropping a protected table, as before; the dropped table's row covers nothing either way.
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
    END LOOP;
END
$$;
$replace$;
        DROP EVENT TRIGGER fencing_protect_new_partitions;
        EXECUTE 'CREATE EVENT TRIGGER fencing_protect_new_partitions ON ddl_command_end'
                || ' WHEN TAG IN (''CREATE TABLE'', ''ALTER TABLE'', ''DROP TABLE'', ''DROP SCHEMA'', ''DROP OWNED'')'
                || ' EXECUTE FUNCTION ${flyway:defaultSchema}.protect_new_partitions()';
    ELSE
        RAISE NOTICE 'fencing: no event trigger replaced (not a superuser, or none exists): call unprotect() before dropping a protected table, or its resources'' checks keep leaving markers';
    END IF;
END
$event$;

ALTER FUNCTION ${flyway:defaultSchema}.table_unprotected() OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.table_unprotected() FROM PUBLIC;
