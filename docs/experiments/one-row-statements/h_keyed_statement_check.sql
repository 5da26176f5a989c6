-- Prototype H (not a migration): V13's triggers, the statement trigger checking keyed tags instead of
-- the marker (INSERT and the new rows of an UPDATE only: a measurement). Scratch database of mk.sh, superuser.
CREATE SEQUENCE IF NOT EXISTS fencing.row_key_1 MINVALUE -9223372036854775808;
CREATE SEQUENCE IF NOT EXISTS fencing.row_key_2 MINVALUE -9223372036854775808;
-- the keyed tag of a resource for this transaction (owner-only session key)
-- full decision for one resource, then its tag in fencing.row_tags
CREATE OR REPLACE FUNCTION fencing.pass_resource(p_resource text, p_table regclass) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_checked text := current_setting('fencing.checked', true);
    v_id bigint; v_secret text; v_pos int; v_parts text[]; v_ok boolean := false;
BEGIN
    IF v_checked <> '' AND p_resource IS NOT NULL THEN
        SELECT r.id, s.secret INTO v_id, v_secret FROM fencing.resource r, fencing.marker_secret s WHERE r.name = p_resource;
        v_pos := position(',' || v_id || ':' IN ',' || v_checked);
        IF v_pos > 0 THEN
            v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
            v_ok := v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':' || v_id || ':' || v_parts[2], 'UTF8')), 'hex'), 32);
        END IF;
    END IF;
    IF v_ok IS NOT TRUE THEN
        PERFORM fencing.require_fenced(p_resource, p_table);
    END IF;
    IF current_setting('fencing.row_key_set', true) IS DISTINCT FROM 'y' THEN
        PERFORM setval('fencing.row_key_1', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint),
                setval('fencing.row_key_2', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint);
        PERFORM set_config('fencing.row_key_set', 'y', false);
    END IF;
    PERFORM set_config('fencing.row_tags', coalesce(nullif(current_setting('fencing.row_tags', true), ''), ',') || p_resource || ':'
        || left(encode(sha256(convert_to(currval('fencing.row_key_1') || ':' || currval('fencing.row_key_2') || ':' || pg_current_xact_id() || ':' || p_resource, 'UTF8')), 'hex'), 32) || ',', true);
END $$;
-- statement trigger: each row's resource (the previous one skipped), its tag, else the full decision
CREATE OR REPLACE FUNCTION fencing.enforce_rows_h() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    r record; v_resource text; v_last text; v_tags text := current_setting('fencing.row_tags', true);
BEGIN
    FOR r IN SELECT t FROM fencing_new t LOOP   -- (UPDATE: also fencing_old; measurement prototype)
        v_resource := TG_ARGV[1] || (to_jsonb(r.t) ->> TG_ARGV[0]);
        CONTINUE WHEN v_resource = v_last;
        IF coalesce(strpos(v_tags, ',' || v_resource || ':'), 0) = 0
           OR strpos(v_tags, ',' || v_resource || ':' || left(encode(sha256(convert_to(currval('fencing.row_key_1') || ':' || currval('fencing.row_key_2')
                         || ':' || pg_current_xact_id() || ':' || v_resource, 'UTF8')), 'hex'), 32) || ',') = 0 THEN
            PERFORM fencing.pass_resource(v_resource, TG_RELID::regclass);
            v_tags := current_setting('fencing.row_tags', true);
        END IF;
        v_last := v_resource;
    END LOOP;
    RETURN NULL;
END $$;
-- the row trigger: V13's, plus the tag (so that the statement trigger finds it)
CREATE OR REPLACE FUNCTION fencing.enforce_row_h() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE v_resource text := TG_ARGV[1] || (to_jsonb(NEW) ->> TG_ARGV[0]);
BEGIN
    PERFORM fencing.pass_resource(v_resource, TG_RELID::regclass);
    PERFORM set_config('fencing.passed', coalesce(nullif(current_setting('fencing.passed', true), ''), ',') || v_resource || ',', true);
    RETURN NEW;
END $$;
SELECT fencing.drop_protection('t');
CREATE TRIGGER fencing_protect BEFORE INSERT ON t FOR EACH ROW WHEN (COALESCE(pg_catalog.strpos(pg_catalog.current_setting('fencing.passed', true), ',acct/' OPERATOR(pg_catalog.||) (NEW.acct)::pg_catalog.text OPERATOR(pg_catalog.||) ','), 0) OPERATOR(pg_catalog.=) 0) EXECUTE FUNCTION fencing.enforce_row_h('acct', 'acct/');
CREATE TRIGGER fencing_protect_update BEFORE UPDATE ON t FOR EACH ROW WHEN ((OLD.acct)::pg_catalog.text IS DISTINCT FROM (NEW.acct)::pg_catalog.text OR COALESCE(pg_catalog.strpos(pg_catalog.current_setting('fencing.passed', true), ',acct/' OPERATOR(pg_catalog.||) (NEW.acct)::pg_catalog.text OPERATOR(pg_catalog.||) ','), 0) OPERATOR(pg_catalog.=) 0) EXECUTE FUNCTION fencing.enforce_row_h('acct', 'acct/');
CREATE TRIGGER fencing_protect_inserted AFTER INSERT ON t REFERENCING NEW TABLE AS fencing_new FOR EACH STATEMENT EXECUTE FUNCTION fencing.enforce_rows_h('acct', 'acct/');
CREATE TRIGGER fencing_protect_updated AFTER UPDATE ON t REFERENCING OLD TABLE AS fencing_old NEW TABLE AS fencing_new FOR EACH STATEMENT EXECUTE FUNCTION fencing.enforce_rows_h('acct', 'acct/');
