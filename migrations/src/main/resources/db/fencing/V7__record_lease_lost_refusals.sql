-- The rejection log also takes the refusals a client makes by itself because it knows its lease is
-- lost (SQLSTATE ZF005, reason 'lease_lost'): fencing-jdbc refuses such a write before it reaches
-- check_token, and records it with record_rejection like the database's own refusals, so that
-- every refusal a client saw is in the log. Found by the torture test (a worker paused past its
-- lease saw ZF005 refusals the log did not hold). record_rejection is redefined only to map
-- ZF005; everything else is as in V2.

ALTER TABLE ${flyway:defaultSchema}.rejection DROP CONSTRAINT rejection_reason_check;
ALTER TABLE ${flyway:defaultSchema}.rejection ADD CONSTRAINT rejection_reason_check CHECK (reason IN
    ('stale_token', 'token_used', 'missing_token', 'never_issued', 'invalid_resource', 'lease_lost'));

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.record_rejection(p_resource text, p_token bigint, p_sqlstate text)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
    v_reason text;
    v_holder text;
    v_id bigint;
BEGIN
    v_reason := CASE p_sqlstate
        WHEN 'ZF001' THEN 'stale_token'
        WHEN 'ZF002' THEN 'missing_token'
        WHEN 'ZF003' THEN 'never_issued'
        WHEN 'ZF004' THEN 'invalid_resource'
        WHEN 'ZF005' THEN 'lease_lost'
    END;
    IF v_reason IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('record_rejection takes a refusal SQLSTATE (ZF001..ZF005), not %s', coalesce(p_sqlstate, 'null')),
            jsonb_build_object('argument', 'sqlstate', 'value', p_sqlstate));
    END IF;
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF FOUND THEN
        IF r.strict_mode AND p_sqlstate = 'ZF001' AND p_token = r.last_used THEN
            v_reason := 'token_used';
        END IF;
        SELECT i.holder INTO v_holder FROM ${flyway:defaultSchema}.issuance i
         WHERE i.resource_id = r.id AND i.token = p_token;
    END IF;
    INSERT INTO ${flyway:defaultSchema}.rejection (resource, token, max_seen, holder, reason, sqlstate)
    VALUES (left(coalesce(p_resource, ''), 200), p_token, r.max_seen, v_holder, v_reason, p_sqlstate)
    RETURNING id INTO v_id;
    RETURN v_id;
END
$$;
