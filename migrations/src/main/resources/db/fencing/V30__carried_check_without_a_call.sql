-- The carried check without a function call (issues 13 and 14). FencedDataSource carries the
-- check of a transaction's first write, one token, in front of the write in the same round trip.
-- Since V28 the check is: the advisory share lock (key space, hashtext(name)), then, in a later
-- statement, one read of the resource row. This migration lets the client send exactly that as two
-- plain statements, so the common check calls no SECURITY DEFINER function at all:
--
--   A: SELECT pg_catalog.pg_advisory_xact_lock_shared(<key space>, pg_catalog.hashtext($resource))
--   B: SELECT coalesce((SELECT -1 FROM <schema>.check_at_token c
--                        WHERE c.name = $resource AND c.max_seen = $token AND c.lock_space = <key space>),
--                      <schema>.check_one($resource, $token))
--
-- B accepts (-1) only through this view, which holds the fast path's acceptance condition, written
-- once, here: a local resource (its tokens are issued here, so every handover takes the name's key
-- exclusively, V28), not strict (a strict check must hold its row: fence_full), not protected (a
-- protected resource's check must set the marker: check_one's mark_checked), a token ever issued
-- (max_seen > 0), and a READ COMMITTED transaction. Anything else, and any row not at the token or
-- not in the key space A locked, makes B call check_one, which decides as before (its own fast path
-- under READ COMMITTED, else fence_full on row locks). docs/ARCHITECTURE.md, "The carried check's
-- server CPU", argues it hazard by hazard; in short:
--
-- 1. Hazard 7: B is a later statement than A, so under READ COMMITTED its snapshot is taken after
--    A's lock was granted (PortalStart takes a new snapshot per statement, after the statement's
--    relation locks). Every handover of the name takes the key exclusively before it advances the
--    row (V28, 1 and 5): an advance B does not see waits for this transaction to end.
-- 2. REPEATABLE READ and SERIALIZABLE: the transaction's snapshot may be A's, taken before the
--    lock. The view has no rows then (the isolation test is the view's, evaluated in B's
--    transaction, whatever the client believes the level is), so B calls check_one (FOR SHARE).
--    A's lock stays held: it only makes a handover of that name wait for this transaction, as
--    check_one's FOR SHARE row lock makes it wait already.
-- 3. The key space is a constant of the client's text (learned from resource.lock_space's
--    default). B accepts only a row whose lock_space is the constant A locked, so a stale or wrong
--    constant sends the check to check_one. set_advisory_key_space takes ACCESS EXCLUSIVE on
--    resource; B, which reads resource, waits for it and its snapshot then sees the new space.
-- 4. Strict resources: B calls check_one, whose fence_full locks the row; the share lock A took
--    stays until the transaction ends. Lock order is unchanged (an acquisition: lease row, name
--    key exclusively, resource row; a check: name key shared, then the resource row), so this only
--    makes a handover wait at the key rather than at the row, and no cycle forms.
-- 5. Savepoints (hazard 8): A's lock belongs to the subtransaction that took it; ROLLBACK TO
--    SAVEPOINT releases it, and the client then considers the check undone, as with check_one.
--
-- Privileges: the application role gets SELECT on this view only (owned by the owner role; the
-- table stays unreadable). It shows the name, max_seen and lock_space of the resources the fast
-- path may accept. None is a secret: a token is not authentication (hazard 13: any number can be
-- presented, and one above last_issued is refused), a refusal already tells the caller max_seen,
-- status() tells holder and max_seen, and the key space is the column default every session can
-- read in pg_attrdef. The view is not a security_barrier (that would put a subquery scan into
-- every check's plan): a caller's own function in a query of it could see the rows it filters out,
-- the same three columns of other resources, which status() already tells the role for any name.

CREATE VIEW ${flyway:defaultSchema}.check_at_token AS
SELECT r.name, r.max_seen, r.lock_space
  FROM ${flyway:defaultSchema}.resource r
 WHERE r.max_seen > 0
   -- local, and READ COMMITTED: one test of the row (a separate isolation test would be a
   -- one-time filter, a plan node of its own set up in every execution)
   AND r.issuer = CASE WHEN pg_catalog.current_setting('transaction_isolation') = 'read committed'
                       THEN 'local' END
   AND NOT r.strict_mode
   AND NOT r.has_protected;

ALTER VIEW ${flyway:defaultSchema}.check_at_token OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.check_at_token FROM PUBLIC;
GRANT SELECT ON ${flyway:defaultSchema}.check_at_token TO "${app_role}";
