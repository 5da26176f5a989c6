-- Records the fingerprints of the fence's objects after each applied migration, so that
-- FencingMigrations.validate() can tell when a function, table or grant was changed by hand.
-- A migrate that applies nothing runs no afterEachMigrate, so it never blesses a tampered object.
DO $$ BEGIN PERFORM ${flyway:defaultSchema}.record_catalog_fingerprint(); END $$;
