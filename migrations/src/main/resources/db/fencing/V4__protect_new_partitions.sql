-- Partitions created or attached after protect()/protect_rows() get the TRUNCATE trigger at once.
-- (Their INSERT/UPDATE/DELETE are covered already: row triggers of a partitioned table are cloned
-- to every partition.) An event trigger can only be created by a superuser: when the migrating
-- user is not one, this migration creates nothing and says so, and re-running protect() after
-- attaching a partition remains the way to cover TRUNCATE of that partition.

CREATE FUNCTION ${flyway:defaultSchema}.protect_new_partitions()
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
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.protect_new_partitions() FROM PUBLIC;

DO $event$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'CREATE EVENT TRIGGER fencing_protect_new_partitions ON ddl_command_end'
                || ' WHEN TAG IN (''CREATE TABLE'', ''ALTER TABLE'')'
                || ' EXECUTE FUNCTION ${flyway:defaultSchema}.protect_new_partitions()';
    ELSE
        RAISE NOTICE 'fencing: not a superuser, so no event trigger: after attaching a partition to a protected table, run protect() again to cover TRUNCATE of that partition';
    END IF;
END
$event$;
