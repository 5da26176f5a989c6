-- Prepares, before each pending migration, what a deployer that is not a superuser needs (managed
-- PostgreSQL has none): the two roles, the deployer's membership in the owner role, and the owner
-- role's right to own objects in the fence's schema. Each step is granted here when the deployer
-- may grant it, or refused with an error that names the privilege and the statement an
-- administrator runs. Idempotent: a superuser, or a deployer that has everything, changes nothing.
--
-- FencingMigrations runs this same block in a transaction it rolls back, before Flyway creates
-- the schema (its preflight), so that a refusal leaves nothing behind. Plain Flyway runs it after
-- creating the schema: a refusal there leaves the empty schema.
--
-- PostgreSQL 16 changed CREATEROLE: a non-superuser with CREATEROLE administers only the roles it
-- created (it gets ADMIN OPTION on them, but neither SET nor INHERIT unless createrole_self_grant
-- says so), and ALTER ... OWNER TO needs SET on the new owner. PostgreSQL 15 lets CREATEROLE grant
-- any non-superuser role, and ALTER ... OWNER TO needs membership. Both need CREATE on the schema
-- for the new owner.
DO $prepare$
DECLARE
    v_me        name    := current_user;
    v_super     boolean := (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user);
    v_createrole boolean := (SELECT rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = current_user);
    v_pg16      boolean := pg_catalog.current_setting('server_version_num')::int >= 160000;
    v_fresh     boolean := pg_catalog.to_regclass('${flyway:defaultSchema}.resource') IS NULL;
    v_role      text;
    v_shared    text;
    v_foreign   text;
    v_grant     boolean;
BEGIN
    -- Roles are cluster-wide. Owner and application roles that already serve another database
    -- would let that database's deployer own this fence, and that application's login call its
    -- functions (every database grants CONNECT to PUBLIC): refuse on a first migration.
    IF v_fresh THEN
        SELECT pg_catalog.string_agg(DISTINCT pg_catalog.format('%s (database %s)', r.rolname, d.datname), ', ')
          INTO v_shared
          FROM pg_catalog.pg_shdepend s
          JOIN pg_catalog.pg_roles r ON r.oid = s.refobjid
          JOIN pg_catalog.pg_database d ON d.oid = s.dbid
         WHERE s.refclassid = 'pg_catalog.pg_authid'::pg_catalog.regclass
           AND r.rolname IN ('${owner_role}', '${app_role}')
           AND d.datname <> pg_catalog.current_database();
        IF v_shared IS NOT NULL THEN
            RAISE EXCEPTION 'fencing: the roles % already serve another database: %',
                    '${owner_role}/${app_role}', v_shared
                USING ERRCODE = '42501',
                      HINT = 'Give each application its own two roles: --owner-role NAME --app-role NAME on the command line, FencingMigrations.Builder.ownerRole/applicationRole in Java, placeholders owner_role/app_role in Flyway. Shared roles would let one application''s logins call the other''s fence and its deployer own it.';
        END IF;
    END IF;

    FOREACH v_role IN ARRAY ARRAY['${owner_role}', '${app_role}'] LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = v_role) THEN
            IF NOT (v_super OR v_createrole) THEN
                RAISE EXCEPTION 'fencing: role % does not exist, and % may not create roles (needs CREATEROLE)', v_role, v_me
                    USING ERRCODE = '42501',
                          HINT = pg_catalog.format('Ask an administrator to run: CREATE ROLE %I NOLOGIN NOINHERIT; CREATE ROLE %I NOLOGIN; GRANT %I TO %I;',
                                                   '${owner_role}', '${app_role}', '${owner_role}', v_me);
            END IF;
            IF v_role = '${owner_role}' THEN
                EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT', v_role);
            ELSE
                EXECUTE pg_catalog.format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE', v_role);
            END IF;
        END IF;
    END LOOP;

    IF v_super THEN
        RETURN; -- a superuser hands objects to any role and replaces any function
    END IF;

    -- The deployer hands every object over to the owner role (ALTER ... OWNER TO) and later
    -- replaces the owner's functions (CREATE OR REPLACE): it needs the owner role's privileges,
    -- and on PostgreSQL 16 the right to SET ROLE to it.
    v_grant := NOT pg_catalog.pg_has_role(v_me, '${owner_role}', 'USAGE');
    IF v_pg16 AND NOT v_grant THEN
        v_grant := NOT pg_catalog.pg_has_role(v_me, '${owner_role}', 'SET'); -- no SET before 16
    END IF;
    IF v_grant THEN
        BEGIN
            IF v_pg16 THEN
                EXECUTE pg_catalog.format('GRANT %I TO %I WITH INHERIT TRUE, SET TRUE', '${owner_role}', v_me);
            ELSE
                EXECUTE pg_catalog.format('GRANT %I TO %I', '${owner_role}', v_me);
            END IF;
        EXCEPTION WHEN insufficient_privilege THEN
            IF NOT v_pg16 AND pg_catalog.pg_has_role(v_me, '${owner_role}', 'MEMBER') THEN
                v_grant := false; -- a member already: reported below
            ELSE
                RAISE EXCEPTION 'fencing: % must be a member of role % to hand the fence''s objects to it, and may not grant that itself',
                        v_me, '${owner_role}'
                    USING ERRCODE = '42501',
                          HINT = pg_catalog.format('Ask an administrator (a superuser, or on PostgreSQL 16 a role with ADMIN OPTION on %I) to run: GRANT %I TO %I%s;',
                                                   '${owner_role}', '${owner_role}', v_me,
                                                   CASE WHEN v_pg16 THEN ' WITH INHERIT TRUE, SET TRUE' ELSE '' END);
            END IF;
        END;
        IF NOT pg_catalog.pg_has_role(v_me, '${owner_role}', 'USAGE') THEN
            RAISE EXCEPTION 'fencing: % is a member of role % but does not inherit its privileges', v_me, '${owner_role}'
                USING ERRCODE = '42501',
                      HINT = CASE WHEN v_pg16
                                  THEN pg_catalog.format('Ask an administrator to run: GRANT %I TO %I WITH INHERIT TRUE, SET TRUE;', '${owner_role}', v_me)
                                  ELSE pg_catalog.format('Run: ALTER ROLE %I INHERIT;', v_me) END;
        END IF;
    END IF;

    -- A new owner must have CREATE on the schema of what it is given.
    IF NOT pg_catalog.has_schema_privilege('${owner_role}', '${flyway:defaultSchema}', 'CREATE') THEN
        BEGIN
            EXECUTE pg_catalog.format('GRANT CREATE ON SCHEMA %I TO %I', '${flyway:defaultSchema}', '${owner_role}');
        EXCEPTION WHEN insufficient_privilege THEN
            NULL; -- reported below
        END;
        IF NOT pg_catalog.has_schema_privilege('${owner_role}', '${flyway:defaultSchema}', 'CREATE') THEN
            RAISE EXCEPTION 'fencing: role % needs CREATE on schema % to own the fence''s objects, and % may not grant it',
                    '${owner_role}', '${flyway:defaultSchema}', v_me
                USING ERRCODE = '42501',
                      HINT = pg_catalog.format('Ask the owner of schema %I to run: GRANT CREATE ON SCHEMA %I TO %I;',
                                               '${flyway:defaultSchema}', '${flyway:defaultSchema}', '${owner_role}');
        END IF;
    END IF;

    -- An upgrade also rewrites what the first migration left with its migrating user: the history
    -- table, the tamper evidence (catalog_checksum) and its two functions.
    IF NOT v_fresh THEN
        SELECT pg_catalog.string_agg(pg_catalog.format('%s (owner %s)', o.name, o.owner), ', ')
          INTO v_foreign
          FROM (SELECT c.oid::pg_catalog.regclass::text AS name, c.relowner AS owner_oid,
                       c.relowner::pg_catalog.regrole::text AS owner
                  FROM pg_catalog.pg_class c
                 WHERE c.relnamespace = '${flyway:defaultSchema}'::pg_catalog.regnamespace
                   AND c.relname IN ('${flyway:table}', 'catalog_checksum')
                UNION ALL
                SELECT p.oid::pg_catalog.regprocedure::text, p.proowner, p.proowner::pg_catalog.regrole::text
                  FROM pg_catalog.pg_proc p
                 WHERE p.pronamespace = '${flyway:defaultSchema}'::pg_catalog.regnamespace
                   AND p.proname IN ('catalog_fingerprint', 'record_catalog_fingerprint', 'acl_text')) o
         WHERE NOT pg_catalog.pg_has_role(v_me, o.owner_oid, 'USAGE');
        IF v_foreign IS NOT NULL THEN
            RAISE EXCEPTION 'fencing: % cannot upgrade schema %: it does not own %', v_me, '${flyway:defaultSchema}', v_foreign
                USING ERRCODE = '42501',
                      HINT = 'Migrate as the user that ran the first migration, or make this user a member of that user''s role.';
        END IF;
    END IF;
END
$prepare$;

-- An object of the fence changed by hand since the last migration (what validate() names) is not
-- migrated over: afterEachMigrate records the fingerprints of every object, so an upgrade would
-- record the change as migrated and validate() would no longer name it (a check replaced by one
-- that accepts everything would pass as the migrations' own). Refused before anything changes
-- (the preflight runs this block too), naming each object. (UpgradeFailureTest)
DO $changed$
DECLARE
    v_changed text;
BEGIN
    IF pg_catalog.to_regclass('${flyway:defaultSchema}.catalog_checksum') IS NULL
       OR pg_catalog.to_regprocedure('${flyway:defaultSchema}.catalog_fingerprint()') IS NULL THEN
        RETURN; -- a first migration: no evidence yet
    END IF;
    -- dynamic: the table does not exist before V1, and PL/pgSQL plans a statement as a whole
    EXECUTE $sql$
        SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s)', coalesce(n.object, t.object),
                                     CASE WHEN t.object IS NULL THEN 'added'
                                          WHEN n.object IS NULL THEN 'dropped' ELSE 'changed' END),
                                     ', ' ORDER BY coalesce(n.object, t.object))
          FROM ${flyway:defaultSchema}.catalog_fingerprint() n
          FULL JOIN ${flyway:defaultSchema}.catalog_checksum t ON t.object = n.object
         WHERE n.fingerprint IS DISTINCT FROM t.fingerprint
           AND EXISTS (SELECT FROM ${flyway:defaultSchema}.catalog_checksum)
    $sql$ INTO v_changed;
    IF v_changed IS NOT NULL THEN
        RAISE EXCEPTION 'fencing: schema % was changed by hand since its last migration: %; an upgrade would record that as migrated',
                '${flyway:defaultSchema}', v_changed
            USING ERRCODE = '55000',
                  HINT = pg_catalog.format('Undo the change (validate names it; a fresh migration of the same version shows the original). If it is intended, record it as the migrating user first: SELECT %I.record_catalog_fingerprint();',
                                           '${flyway:defaultSchema}');
    END IF;
END
$changed$;

-- Before V28 (V27 is in and V28 is not, by the catalog): V28 reads the advisory key space from
-- resource.lock_space's column default with the pattern '^-?[0-9]+', and PostgreSQL prints a
-- negative integer default as '-5'::integer, so V28 failed ("the default of resource.lock_space is
-- not an integer") for a deployment whose space set_advisory_key_space had made negative (V34 fixed
-- the same read in the function). V28 cannot change; so the space is kept in a setting local to
-- V28's transaction (tagged with its id) and the default set to 0 for V28 to read (only the fast path's constant
-- comes from it: the rows keep the space, and a constant that is not the rows' only sends checks to
-- the full path). afterEachMigrate sets the space again with set_advisory_key_space once V28 is in,
-- in V28's transaction (Flyway runs a migration's callbacks in it, under V28's ACCESS EXCLUSIVE
-- lock on resource); if V28 fails, the transaction rolls all of it back.
-- (NegativeKeySpaceMigrationTest)
DO $keyspace$
DECLARE
    v_default text;
BEGIN
    IF pg_catalog.to_regclass('${flyway:defaultSchema}.resource') IS NULL
       OR pg_catalog.to_regprocedure('${flyway:defaultSchema}.fence(text,bigint)') IS NULL
       OR pg_catalog.to_regprocedure('${flyway:defaultSchema}.try_acquire(text,text,interval,interval)') IS NULL THEN
        RETURN;
    END IF;
    -- V28 is next when V27 is in (try_acquire says so) and V28 is not (fence() carries no key
    -- space constant yet). Read from the catalog, not the history table: in a Flyway group
    -- (group=true) V27's history row is written only when the whole group is, after V28.
    IF (SELECT p.prosrc FROM pg_catalog.pg_proc p
         WHERE p.oid = '${flyway:defaultSchema}.fence(text,bigint)'::pg_catalog.regprocedure)
           ~ '/\* key space \*/'
       OR (SELECT p.prosrc FROM pg_catalog.pg_proc p
            WHERE p.oid = '${flyway:defaultSchema}.try_acquire(text,text,interval,interval)'::pg_catalog.regprocedure)
           !~ 'The four argument checks of V26 as one condition' THEN
        RETURN;
    END IF;
    SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO v_default
      FROM pg_catalog.pg_attrdef d
      JOIN pg_catalog.pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE d.adrelid = '${flyway:defaultSchema}.resource'::pg_catalog.regclass AND a.attname = 'lock_space';
    IF v_default ~ '^''-[0-9]+''::integer$' THEN
        -- tagged with this transaction (afterEachMigrate ignores any other value, e.g. one the
        -- session was started with) and local to it (V28's: Flyway runs its callbacks in it)
        PERFORM pg_catalog.set_config('fencing.migration_key_space',
                                      pg_catalog.pg_current_xact_id()::text || ':'
                                      || pg_catalog.substring(v_default, '^''(-[0-9]+)''')::integer::text, true);
        ALTER TABLE ${flyway:defaultSchema}.resource ALTER COLUMN lock_space SET DEFAULT 0;
    END IF;
END
$keyspace$;
