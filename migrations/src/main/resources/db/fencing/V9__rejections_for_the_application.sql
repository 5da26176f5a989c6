-- The application role sees the refusals recorded in its fence, without reading (or writing) the
-- rejection table itself: rejections(resource, limit) returns one resource's refusals (or, with a
-- NULL resource, every resource's), newest first. It only reads, so it cannot forge or delete a
-- row; record_rejection (V2, V7) remains the only way in, and it reads max_seen and the holder
-- itself.

CREATE FUNCTION ${flyway:defaultSchema}.rejections(p_resource text, p_limit integer DEFAULT 100)
    RETURNS TABLE (id bigint, resource text, token bigint, max_seen bigint, holder text, reason text,
                   sqlstate text, db_user text, client_addr inet, application text,
                   rejected_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_resource IS NOT NULL THEN
        PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('limit must be from 1 to 10000, was %s', coalesce(p_limit::text, 'null')),
            jsonb_build_object('argument', 'limit', 'value', p_limit));
    END IF;
    RETURN QUERY
        SELECT r.id, r.resource, r.token, r.max_seen, r.holder, r.reason, r.sqlstate, r.db_user,
               r.client_addr, r.application, r.rejected_at
          FROM ${flyway:defaultSchema}.rejection r
         WHERE p_resource IS NULL OR r.resource = p_resource
         ORDER BY r.rejected_at DESC, r.id DESC
         LIMIT p_limit;
END
$$;

ALTER FUNCTION ${flyway:defaultSchema}.rejections(text, integer) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION ${flyway:defaultSchema}.rejections(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${flyway:defaultSchema}.rejections(text, integer) TO "${app_role}";
