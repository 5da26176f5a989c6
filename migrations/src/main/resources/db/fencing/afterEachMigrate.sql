-- Records the fingerprints of the fence's objects after each applied migration, so that
-- FencingMigrations.validate() can tell when a function, table or grant was changed by hand.
-- A migrate that applies nothing runs no afterEachMigrate, so it never blesses a tampered object.
-- First, after V28, the negative advisory key space beforeEachMigrate kept aside is set again
-- (see there): the column default and the fast path's constants, as set_advisory_key_space does.
DO $$
DECLARE
    v_space text := pg_catalog.current_setting('fencing.migration_key_space', true);
BEGIN
    -- only what beforeEachMigrate kept in this transaction ('<xid>:<space>'); any other value
    -- the session has (PGOPTIONS, ALTER ROLE ... SET) is not the fence's to act on
    IF v_space ~ '^[0-9]+:-[0-9]+$'
       AND pg_catalog.split_part(v_space, ':', 1) = pg_catalog.pg_current_xact_id()::text THEN
        PERFORM pg_catalog.set_config('fencing.migration_key_space', '', true);
        PERFORM ${flyway:defaultSchema}.set_advisory_key_space(pg_catalog.split_part(v_space, ':', 2)::integer);
    END IF;
    PERFORM ${flyway:defaultSchema}.record_catalog_fingerprint();
END
$$;
