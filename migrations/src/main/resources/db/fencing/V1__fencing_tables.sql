-- The fence's state: token sequence, resources, leases, issuances, rejections.
-- Schema: ${flyway:defaultSchema} (created by Flyway). Roles: ${owner_role} owns everything and is
-- the identity the SECURITY DEFINER functions run as; ${app_role} may only execute the API
-- functions (V2). Both are NOLOGIN; grant ${app_role} to the application's login role.

DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = '${owner_role}') THEN
        BEGIN
            CREATE ROLE "${owner_role}" NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL; -- created concurrently by a migration of another database in this cluster
        END;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = '${app_role}') THEN
        BEGIN
            CREATE ROLE "${app_role}" NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END IF;
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = '${owner_role}') THEN
        RAISE EXCEPTION 'role ${owner_role} must not be a superuser: the fence functions run as it';
    END IF;
    -- The migrating user must be able to hand objects over to the owner role.
    IF NOT pg_catalog.pg_has_role(current_user, '${owner_role}', 'MEMBER') THEN
        EXECUTE pg_catalog.format('GRANT %I TO %I', '${owner_role}', current_user);
    END IF;
END
$roles$;

GRANT USAGE ON SCHEMA ${flyway:defaultSchema} TO "${owner_role}", "${app_role}";

-- Issue: one sequence for every locally issued token. CACHE 1 so no value is handed out of a
-- per-backend cache after a crash; NO CYCLE so it can never wrap to smaller values; logged.
CREATE SEQUENCE ${flyway:defaultSchema}.token_seq
    AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 NO MAXVALUE CACHE 1 NO CYCLE;

-- Compare: one row per fenced resource. max_seen only ever climbs.
CREATE TABLE ${flyway:defaultSchema}.resource (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text        NOT NULL UNIQUE,
    issuer        text        NOT NULL CHECK (issuer IN ('local', 'external')),
    strict_mode   boolean     NOT NULL DEFAULT false,
    max_seen      bigint      NOT NULL DEFAULT 0 CHECK (max_seen >= 0),
    -- local resources: the last token this database issued for the resource (0 for external ones)
    last_issued   bigint      NOT NULL DEFAULT 0 CHECK (last_issued >= 0),
    -- strict resources: the last token that admitted a write transaction, and that transaction
    last_used     bigint      NOT NULL DEFAULT 0 CHECK (last_used >= 0),
    last_used_xid xid8,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (issuer = 'external' OR max_seen <= last_issued),
    CHECK (issuer = 'local' OR last_issued = 0),
    CHECK (last_used <= max_seen)
);

-- Issue: the current lease of each locally issued resource, on the database clock.
CREATE TABLE ${flyway:defaultSchema}.lease (
    resource_id bigint      PRIMARY KEY REFERENCES ${flyway:defaultSchema}.resource (id),
    holder      text,                      -- NULL: free (never taken, or released)
    token       bigint      NOT NULL DEFAULT 0,
    acquired_at timestamptz,
    expires_at  timestamptz,
    released_at timestamptz,
    CHECK (holder IS NULL OR (token > 0 AND acquired_at IS NOT NULL AND expires_at IS NOT NULL))
);

-- Every token ever issued, with its holder: forensics, and the evidence that none was issued twice.
CREATE TABLE ${flyway:defaultSchema}.issuance (
    token       bigint      PRIMARY KEY,
    resource_id bigint      NOT NULL REFERENCES ${flyway:defaultSchema}.resource (id),
    holder      text        NOT NULL,
    ttl         interval    NOT NULL,
    issued_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX issuance_resource_idx ON ${flyway:defaultSchema}.issuance (resource_id, token);

-- Refused writes. A refusal aborts the writer's transaction, so the row is written afterwards by
-- record_rejection() in a transaction of its own (the Java client does it automatically).
CREATE TABLE ${flyway:defaultSchema}.rejection (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource    text        NOT NULL,
    token       bigint,
    max_seen    bigint,
    holder      text,
    reason      text        NOT NULL CHECK (reason IN
                    ('stale_token', 'token_used', 'missing_token', 'never_issued', 'invalid_resource')),
    sqlstate    text        NOT NULL,
    db_user     text        NOT NULL DEFAULT session_user,
    client_addr inet                 DEFAULT inet_client_addr(),
    application text                 DEFAULT current_setting('application_name', true),
    rejected_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rejection_resource_idx ON ${flyway:defaultSchema}.rejection (resource, rejected_at);

-- The secret of the markers a passed check leaves (V2, mark_checked): one row, readable only by the
-- owner role, so the application role cannot forge a marker.
CREATE TABLE ${flyway:defaultSchema}.marker_secret (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    secret    text    NOT NULL
);
INSERT INTO ${flyway:defaultSchema}.marker_secret (secret) VALUES (gen_random_uuid()::text || gen_random_uuid()::text);

-- Tamper evidence: fingerprints of this schema's objects as the migrations left them
-- (written by the afterEachMigrate callback, compared by FencingMigrations.validate()).
CREATE TABLE ${flyway:defaultSchema}.catalog_checksum (
    object      text        PRIMARY KEY,
    fingerprint text        NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION ${flyway:defaultSchema}.catalog_fingerprint()
    RETURNS TABLE (object text, fingerprint text)
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'function ' || p.oid::regprocedure::text,
           md5(pg_get_functiondef(p.oid) || ' owner=' || p.proowner::regrole::text
               || ' acl=' || coalesce(p.proacl::text, 'default'))
      FROM pg_proc p
     WHERE p.pronamespace = '${flyway:defaultSchema}'::regnamespace
    UNION ALL
    SELECT 'relation ' || c.oid::regclass::text,
           md5(c.relkind::text || ' owner=' || c.relowner::regrole::text
               || ' acl=' || coalesce(c.relacl::text, 'default')
               || ' persistence=' || c.relpersistence::text
               || ' rls=' || c.relrowsecurity::text
               || ' columns=' || coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                                            || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                                                            ', ' ORDER BY a.attnum)
                                             FROM pg_attribute a
                                            WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '')
               || ' constraints=' || coalesce((SELECT string_agg(pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname)
                                                 FROM pg_constraint k WHERE k.conrelid = c.oid), '')
               || ' triggers=' || coalesce((SELECT string_agg(pg_get_triggerdef(t.oid), ', ' ORDER BY t.tgname)
                                              FROM pg_trigger t WHERE t.tgrelid = c.oid), '')
               || ' policies=' || coalesce((SELECT string_agg(pol.polname || ' ' || pol.polcmd::text, ', ')
                                              FROM pg_policy pol WHERE pol.polrelid = c.oid), '')
               || coalesce((SELECT ' sequence=' || s.seqtypid::regtype::text || ' cache=' || s.seqcache
                                   || ' cycle=' || s.seqcycle::text || ' increment=' || s.seqincrement
                              FROM pg_sequence s WHERE s.seqrelid = c.oid), ''))
      FROM pg_class c
     WHERE c.relnamespace = '${flyway:defaultSchema}'::regnamespace
       AND c.relkind IN ('r', 'p', 'S', 'v')
       AND c.relname <> '${flyway:table}'
$$;

CREATE FUNCTION ${flyway:defaultSchema}.record_catalog_fingerprint()
    RETURNS void
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    DELETE FROM ${flyway:defaultSchema}.catalog_checksum;
    INSERT INTO ${flyway:defaultSchema}.catalog_checksum (object, fingerprint)
    SELECT object, fingerprint FROM ${flyway:defaultSchema}.catalog_fingerprint();
$$;

ALTER SEQUENCE ${flyway:defaultSchema}.token_seq OWNER TO "${owner_role}";
ALTER TABLE ${flyway:defaultSchema}.resource OWNER TO "${owner_role}";
ALTER TABLE ${flyway:defaultSchema}.lease OWNER TO "${owner_role}";
ALTER TABLE ${flyway:defaultSchema}.issuance OWNER TO "${owner_role}";
ALTER TABLE ${flyway:defaultSchema}.rejection OWNER TO "${owner_role}";
ALTER TABLE ${flyway:defaultSchema}.marker_secret OWNER TO "${owner_role}";
-- catalog_checksum and the fingerprint functions stay with the migrating user: the fence's
-- owner role cannot rewrite the evidence of its own objects.
REVOKE ALL ON ALL TABLES IN SCHEMA ${flyway:defaultSchema} FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${flyway:defaultSchema} FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA ${flyway:defaultSchema} FROM PUBLIC;
