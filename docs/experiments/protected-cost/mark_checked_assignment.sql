-- EXPERIMENT: mark_checked (V18) with set_config as an assignment instead of PERFORM; same marker.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.mark_checked(p_resource_id bigint, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql
AS $$
DECLARE
    v_checked text := coalesce(pg_catalog.current_setting('fencing.checked', true), '');
    v_secret text;
    v_entry text;
BEGIN
    SELECT s.secret INTO v_secret FROM ${flyway:defaultSchema}.marker_secret s;
    v_entry := p_resource_id || ':' || p_token || ':'
               || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(
                      v_secret || ':' || pg_catalog.pg_current_xact_id() || ':' || p_resource_id || ':' || p_token,
                      'UTF8')), 'hex'), 32);
    IF pg_catalog.strpos(',' || v_checked, ',' || v_entry || ',') = 0 THEN
        v_checked := pg_catalog.set_config('fencing.checked', v_checked || v_entry || ',', true);
    END IF;
END
$$;
