-- An application's own migration, applied by the application's own Flyway (schema public,
-- default history table flyway_schema_history) beside the fence's migrations. Test data only.
CREATE TABLE app_item (
    id   bigint PRIMARY KEY,
    name text   NOT NULL
);
