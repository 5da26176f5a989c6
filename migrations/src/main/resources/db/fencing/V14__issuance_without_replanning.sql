-- Issue 13/14: what an acquisition costs the server. V12's issue_token() reads the token epoch
-- through three helpers written in LANGUAGE sql with a SET search_path clause: own_epoch(),
-- epoch_of() and current_timeline(). A function with a SET clause is never inlined, and a
-- non-inlined SQL function is parsed and planned again in every transaction that calls it (its
-- plan lives no longer than the calling expression's state, which PL/pgSQL renews per
-- transaction): own_epoch()'s join with pg_control_system() and pg_database alone cost ~100 µs of
-- server CPU per acquisition, and the three together made try_acquire ~3x as expensive as before
-- V12 (measured in a DO loop that commits each acquisition: ~400 µs against ~120 µs).
--
-- The same three functions in PL/pgSQL, whose statements keep their plans for the session. Same
-- names, arguments, results, volatility, owner, grants and search_path; the same SQL, so the
-- same answers under the same snapshot (own_epoch() is STABLE: it reads with its caller's
-- snapshot, as the SQL function did; no row gives the all-NULL row the LEFT JOIN gave).

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.own_epoch()
    RETURNS ${flyway:defaultSchema}.cluster_epoch
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch;
BEGIN
    SELECT c.* INTO e
      FROM ${flyway:defaultSchema}.cluster_epoch c
     WHERE c.system_identifier = (SELECT system_identifier FROM pg_control_system())
       AND c.database_oid = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND c.resource_table = '${flyway:defaultSchema}.resource'::regclass;
    RETURN e; -- NULL columns when there is none yet
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.current_timeline()
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN ('x' || left(pg_walfile_name(pg_current_wal_lsn()), 8))::bit(32)::bigint;
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.epoch_of(e ${flyway:defaultSchema}.cluster_epoch)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN greatest(${flyway:defaultSchema}.current_timeline() - 1 + e.epoch_offset, e.epoch_floor);
END
$$;
