-- Shapes of the one-token check measured for issue 14 (ARCHITECTURE, "The carried check's server
-- CPU"): measurement prototypes, not the fence. Run by check-shapes-callgrind.sh into a scratch
-- database of its scratch cluster; each takes check_one's arguments. The key-space constant in n1
-- and the plain ctid in g2 stand for what a real design would have to supply.

CREATE OR REPLACE FUNCTION fencing.f0(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$ BEGIN RETURN 0; END $function$
;

CREATE OR REPLACE FUNCTION fencing.f0e(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO ''
AS $function$ BEGIN RETURN 0; END $function$
;

CREATE OR REPLACE FUNCTION fencing.g1(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$ BEGIN IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN RETURN 0; END IF; RETURN 1; END $function$
;

CREATE OR REPLACE FUNCTION fencing.g2(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$ DECLARE v_mark boolean; BEGIN SELECT r.has_protected INTO v_mark FROM fencing.resource r WHERE r.ctid = '(0,2)' AND r.id = 1; RETURN 0; END $function$
;

CREATE OR REPLACE FUNCTION fencing.g3(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$ DECLARE v_mark boolean; BEGIN SELECT r.has_protected INTO v_mark FROM fencing.resource r WHERE r.name = p_resource AND r.max_seen = p_token; RETURN 0; END $function$
;

CREATE OR REPLACE FUNCTION fencing.l1(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_id bigint;
    v_space integer;
    v_ctid tid;
    v_locked boolean;
    v_mark boolean;
BEGIN
    SELECT r.id, r.lock_space, r.ctid,
           pg_advisory_xact_lock_shared(r.lock_space, fencing.advisory_key(r.id)) IS NOT NULL
      INTO v_id, v_space, v_ctid, v_locked
      FROM fencing.resource r
     WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode
       AND p_token > 0 AND current_setting('transaction_isolation') = 'read committed';
    IF FOUND THEN
        SELECT r.has_protected INTO v_mark
          FROM fencing.resource r
         WHERE r.ctid = v_ctid AND r.id = v_id AND r.max_seen = p_token AND r.lock_space = v_space;
        IF FOUND THEN
            IF v_mark THEN
                PERFORM fencing.mark_checked(v_id, p_token);
            END IF;
            RETURN 0;
        END IF;
    END IF;
    RETURN fencing.fence(p_resource, p_token)::integer;
END
$function$
;

CREATE OR REPLACE FUNCTION fencing.f2(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_id bigint;
    v_space integer;
    v_ctid tid;
    v_locked boolean;
    v_mark boolean;
BEGIN
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        IF current_setting('fencing.ck_name', true) = p_resource
           AND pg_advisory_xact_lock_shared(current_setting('fencing.ck_space', true)::integer,
                 fencing.advisory_key(current_setting('fencing.ck_id', true)::bigint)) IS NOT NULL THEN
            SELECT r.has_protected INTO v_mark FROM fencing.resource r
             WHERE r.ctid = current_setting('fencing.ck_ctid', true)::tid AND r.id = current_setting('fencing.ck_id', true)::bigint
               AND r.lock_space = current_setting('fencing.ck_space', true)::integer AND r.name = p_resource
               AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode;
            IF FOUND THEN
                IF v_mark THEN
                    PERFORM fencing.mark_checked(v_id, p_token);
                END IF;
                RETURN 0;
            END IF;
        END IF;
        SELECT r.id, r.lock_space, r.ctid,
               pg_advisory_xact_lock_shared(r.lock_space, fencing.advisory_key(r.id)) IS NOT NULL
          INTO v_id, v_space, v_ctid, v_locked
          FROM fencing.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode;
        IF FOUND THEN
            SELECT r.has_protected INTO v_mark
              FROM fencing.resource r
             WHERE r.ctid = v_ctid AND r.id = v_id AND r.max_seen = p_token AND r.lock_space = v_space;
            IF FOUND THEN
                PERFORM set_config('fencing.ck_name', p_resource, false), set_config('fencing.ck_space', v_space::text, false),
                        set_config('fencing.ck_id', v_id::text, false), set_config('fencing.ck_ctid', v_ctid::text, false);
                IF v_mark THEN
                    PERFORM fencing.mark_checked(v_id, p_token);
                END IF;
                RETURN 0;
            END IF;
        END IF;
    END IF;
    RETURN fencing.fence(p_resource, p_token)::integer;
END$function$
;

CREATE OR REPLACE FUNCTION fencing.n1(p_resource text, p_token bigint)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
    v_id bigint;
    v_mark boolean;
BEGIN
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed'
       AND pg_advisory_xact_lock_shared(1178946115, hashtext(p_resource)) IS NOT NULL THEN
        SELECT r.has_protected, r.id INTO v_mark, v_id FROM fencing.resource r
         WHERE r.name = p_resource AND r.max_seen = p_token AND r.issuer = 'local' AND NOT r.strict_mode
           AND r.lock_space = 1178946115;
        IF FOUND THEN
            IF v_mark THEN
                PERFORM fencing.mark_checked(v_id, p_token);
            END IF;
            RETURN 0;
        END IF;
    END IF;
    RETURN fencing.fence(p_resource, p_token)::integer;
END
$function$
;

-- check_one's own body with SET search_path = '' (f1e)
DO $d$ BEGIN EXECUTE format('CREATE OR REPLACE FUNCTION fencing.f1e(p_resource text, p_token bigint) RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = %L AS %L', '', (SELECT prosrc FROM pg_proc WHERE oid = 'fencing.check_one(text,bigint)'::regprocedure)); END $d$;

-- owned by check_one's owner, as the fence's functions are (a superuser's skips every EXECUTE
-- privilege check inside the function)
DO $d$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_proc p
              WHERE p.pronamespace = 'fencing'::regnamespace
                AND p.proname IN ('f0', 'f0e', 'g1', 'g2', 'g3', 'l1', 'f2', 'n1', 'f1e') LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f,
                       (SELECT r.rolname FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
                         WHERE p.oid = 'fencing.check_one(text,bigint)'::regprocedure));
    END LOOP;
END
$d$;

-- Issue 14's function-free shape (check-shapes-callgrind.sh separate PORT ab; CarryCpuProbe's
-- carried-ab builds the same view): through a view the app role could be granted, statement A
-- takes the advisory share lock and notes it in a transaction-local setting, statement B (a later
-- snapshot, hazard 7) accepts on the row still at the token in the key space locked, else calls
-- check_one. The isolation test folded into the issuer's (a one-time filter would add a Result
-- node: +4.4k a transaction).
CREATE OR REPLACE VIEW fencing.probe_accept AS
SELECT r.name, r.max_seen, r.id, r.lock_space, fencing.advisory_key(r.id) AS lock_key, r.has_protected,
       r.id || ':' || r.lock_space AS tag
  FROM fencing.resource r
 WHERE r.issuer = CASE WHEN pg_catalog.current_setting('transaction_isolation') = 'read committed' THEN 'local' END
   AND NOT r.strict_mode AND r.max_seen > 0;
ALTER VIEW fencing.probe_accept OWNER TO shapes_owner;
