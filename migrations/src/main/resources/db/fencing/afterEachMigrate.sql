-- Records the fingerprints of the fence's objects after each applied migration, so that
-- FencingMigrations.validate() can tell when a function, table or grant was changed by hand.
-- A migrate that applies nothing runs no afterEachMigrate, so it never blesses a tampered object.
-- First, after V28, the negative advisory key space beforeEachMigrate kept aside is set again
-- (see there): the column default and the fast path's constants, as set_advisory_key_space does.
DO $$
DECLARE
    v_space text := pg_catalog.current_setting('fencing.migration_key_space', true);
BEGIN
    IF v_space IS NOT NULL AND v_space <> '' THEN
        PERFORM pg_catalog.set_config('fencing.migration_key_space', '', false);
        PERFORM ${flyway:defaultSchema}.set_advisory_key_space(v_space::integer);
    END IF;
    PERFORM ${flyway:defaultSchema}.record_catalog_fingerprint();
END
$$;
