-- NOT A MIGRATION: measured and left out (docs/benchmark/lease-and-growth.md, "try_acquire's
-- statements in wall time, and the epoch re-read apart"). Written as migration V46 on 2026-12-04;
-- it never landed, so V46 stays free. Apply it by hand (the placeholder substituted as the
-- migration CLI does) to rerun the comparison.

-- The lease's in-line issuance (V29) re-read the token epoch after taking the issuance lock inside
-- the UPDATE of the resource row, as a scalar subquery (an InitPlan of the UPDATE): no row updated
-- when the epoch moved, then 40001. Measured on PostgreSQL 15 (docs/benchmark/lease-and-growth.md,
-- "try_acquire's statements"), that UPDATE took about 55 µs of an acquisition's 160 µs of server
-- time, where the same UPDATE without the subquery and the same read as a statement of its own
-- take about 20 µs together (the difference is the executor's and the allocator's work for a
-- ModifyTable with an InitPlan over a table with CHECK constraints, paid once per acquisition).
--
-- Now the re-read is its own statement, right after the lock as before, and the UPDATE runs only
-- when it found the epoch unchanged. Nothing else changes:
-- - the re-read is still a later statement than the lock (V16): under READ COMMITTED it takes a new
--   snapshot, so an advance committed before the lock is seen; none can commit after the lock
--   (advance_epoch takes the issuance gate in a mode that conflicts with ROW EXCLUSIVE) until this
--   transaction ends, so an epoch found unchanged stays so through the UPDATE and the commit;
-- - a moved epoch raises the same 40001 with the same message (FOUND is false after the re-read,
--   and the UPDATE does not run), and the sequence value taken is left unused as before;
-- - the resource row is the one this transaction holds FOR NO KEY UPDATE (or whose lease row lock
--   it holds), so the UPDATE finds it whenever it runs, as the old UPDATE did when the epoch held.
-- (EpochTest#anIssuanceThatWaitedWhileTheEpochAdvancedRetries forces the advance between the
-- first read and the lock, under READ COMMITTED.)
--
-- The body is derived from the one in place (it carries no key space, but a later migration's
-- body must not be replaced by this file's copy of an older one), the anchor found exactly once.
DO $migration$
DECLARE
    v_old constant text :=
           E'        UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()\n'
        || E'         WHERE id = r.id\n'
        || E'           AND (SELECT c.epoch_offset FROM ${flyway:defaultSchema}.cluster_epoch c\n'
        || E'                 WHERE (c.system_identifier, c.database_oid, c.resource_table)\n'
        || E'                     = (v_system, v_database, ''${flyway:defaultSchema}.resource''::regclass)) = v_epoch_offset;\n';
    v_new constant text :=
           E'        -- V46: the re-read as a statement of its own (still after the lock), the UPDATE only\n'
        || E'        -- when the epoch held; FOUND is false after either when it moved.\n'
        || E'        PERFORM FROM ${flyway:defaultSchema}.cluster_epoch c\n'
        || E'         WHERE (c.system_identifier, c.database_oid, c.resource_table)\n'
        || E'             = (v_system, v_database, ''${flyway:defaultSchema}.resource''::regclass)\n'
        || E'           AND c.epoch_offset = v_epoch_offset;\n'
        || E'        IF FOUND THEN\n'
        || E'            UPDATE ${flyway:defaultSchema}.resource SET max_seen = v_token, last_issued = v_token, updated_at = now()\n'
        || E'             WHERE id = r.id;\n'
        || E'        END IF;\n';
    v_def text := pg_catalog.pg_get_functiondef(
        '${flyway:defaultSchema}.try_acquire(text,text,interval,interval)'::pg_catalog.regprocedure);
BEGIN
    IF (length(v_def) - length(replace(v_def, v_old, ''))) / length(v_old) <> 1 THEN
        RAISE EXCEPTION 'V46: try_acquire''s body is not the one this migration derives its new body from';
    END IF;
    EXECUTE replace(v_def, v_old, v_new);
END
$migration$;
