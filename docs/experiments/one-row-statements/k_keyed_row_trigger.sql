-- Prototype K (not a migration): one BEFORE ... FOR EACH ROW trigger, no WHEN, no statement trigger;
-- a resource passes on its keyed tag in fencing.row_tags, else V3's full decision, then gets its tag.
-- For a scratch database of mk.sh, as a superuser, after setup.sql; replaces the triggers of table t.
-- In a migration the two sequences would belong to the owner role, with no privilege for anyone else.
CREATE SEQUENCE IF NOT EXISTS fencing.row_key_1 MINVALUE -9223372036854775808;
CREATE SEQUENCE IF NOT EXISTS fencing.row_key_2 MINVALUE -9223372036854775808;
CREATE OR REPLACE FUNCTION fencing.enforce_row_keyed()
    RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_passed text := current_setting('fencing.row_tags', true);
    v_new text;
    v_old text;
    v_resource text;
    v_checked text;
    v_id bigint;
    v_secret text;
    v_pos int;
    v_parts text[];
    v_ok boolean;
BEGIN
    IF TG_OP <> 'DELETE' THEN
        v_new := TG_ARGV[1] || (to_jsonb(NEW) ->> TG_ARGV[0]);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        v_old := TG_ARGV[1] || (to_jsonb(OLD) ->> TG_ARGV[0]);
    END IF;
    FOREACH v_resource IN ARRAY CASE WHEN TG_OP = 'INSERT' THEN ARRAY[v_new]
                                     WHEN TG_OP = 'DELETE' OR v_old IS NOT DISTINCT FROM v_new THEN ARRAY[v_old]
                                     ELSE ARRAY[v_new, v_old] END
    LOOP
        -- the fast path: this transaction's keyed tag for the resource
        IF coalesce(strpos(v_passed, ',' || v_resource || ':'), 0) > 0 THEN
          IF strpos(v_passed, ',' || v_resource || ':' || left(encode(sha256(convert_to(currval('fencing.row_key_1') || ':' || currval('fencing.row_key_2')
                         || ':' || pg_current_xact_id() || ':' || v_resource, 'UTF8')), 'hex'), 32) || ',') > 0 THEN
            CONTINUE;
          END IF;
        END IF;
        v_ok := false;
        v_checked := current_setting('fencing.checked', true);
        IF v_checked <> '' AND v_resource IS NOT NULL THEN
            SELECT r.id, s.secret INTO v_id, v_secret
              FROM fencing.resource r, fencing.marker_secret s
             WHERE r.name = v_resource;
            v_pos := position(',' || v_id || ':' IN ',' || v_checked);
            IF v_pos > 0 THEN
                v_parts := string_to_array(split_part(substr(v_checked, v_pos), ',', 1), ':');
                v_ok := v_parts[3] = left(encode(sha256(convert_to(v_secret || ':' || pg_current_xact_id() || ':'
                                                                   || v_id || ':' || v_parts[2], 'UTF8')), 'hex'), 32);
            END IF;
        END IF;
        IF v_ok IS NOT TRUE THEN
            PERFORM fencing.require_fenced(v_resource, TG_RELID::regclass);
        END IF;
        IF current_setting('fencing.row_key_set', true) IS DISTINCT FROM 'y' THEN -- the session's first: a fresh key
            PERFORM setval('fencing.row_key_1', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint),
                    setval('fencing.row_key_2', ('x' || left(md5(gen_random_uuid()::text), 16))::bit(64)::bigint);
            PERFORM set_config('fencing.row_key_set', 'y', false);
        END IF;
        IF coalesce(v_passed, '') = '' THEN v_passed := ','; END IF;
        v_passed := v_passed || v_resource || ':' || left(encode(sha256(convert_to(currval('fencing.row_key_1') || ':' || currval('fencing.row_key_2')
                         || ':' || pg_current_xact_id() || ':' || v_resource, 'UTF8')), 'hex'), 32) || ',';
        PERFORM set_config('fencing.row_tags', v_passed, true);
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
SELECT fencing.drop_protection('t');
CREATE TRIGGER fencing_protect BEFORE INSERT OR UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION fencing.enforce_row_keyed('acct', 'acct/');
