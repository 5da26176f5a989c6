-- Epochs recorded by the fence itself (advance_epoch, adoption) that the next server may never see.
--
-- A token's epoch is (timeline - 1) + epoch_offset (V12). A promotion or a point-in-time recovery
-- moves the timeline up by one; advance_epoch() and an adoption move the offset, in a row of
-- cluster_epoch, whose WAL is lost like any other with the history it belongs to: an asynchronous
-- standby cut off before the advance and promoted after the old primary issued in the new epoch,
-- or a PITR to a point before the advance. Before V39:
--   advance_epoch() moved the epoch by 1: epoch (T - 1) + offset + 1 on timeline T, exactly the
--     epoch of timeline T + 1 with the offset the standby knew. The promoted server moved the
--     sequence to that epoch's base and handed out the very tokens the old primary had issued
--     after the advance: a zombie holding one was the current holder on the new primary
--     (LostEpochAdvanceTest: 2^43 + 1 issued on both).
--   adoption_epoch() (a fence restored under a key it has not seen) did not depend on the timeline:
--     a standby of the restored cluster that lost the adoption adopted the same epoch again after
--     its promotion, and issued the same tokens.
-- Now:
--   advance_epoch() moves the epoch 1024 up (as an adoption does): a server that lost the advance
--     issues on its new timeline one epoch above what it knew, below the lost tokens, which it
--     refuses as never issued (ZF003) until 1,023 more timelines (failovers, PITRs) have gone by
--     there; a zombie's lost token is never its current one. 1,024 advances and adoptions fit in
--     the 2^20 epochs.
--   adoption_epoch() adds the timeline (minus 1): a re-adoption after a promotion that lost the
--     first one is an epoch above it, so above every token the lost adoption issued (and below
--     the epochs of advances made after it, as above).
-- Nothing else changes: epoch_of, issue_token, try_acquire's in-line path, record_epoch's limit
-- (2200H past epoch 1048575) and the locks are V12's to V38's.

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.adoption_epoch()
    RETURNS bigint
    LANGUAGE sql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT greatest(${flyway:defaultSchema}.issued_epoch(),
                    (SELECT coalesce(max(epoch_floor), 0) FROM ${flyway:defaultSchema}.cluster_epoch))::bigint
           + 1024 + (${flyway:defaultSchema}.current_timeline() - 1)
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.advance_epoch()
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch;
BEGIN
    PERFORM ${flyway:defaultSchema}.lock_issuance(true); -- EXCLUSIVE on issuance_gate (V38)
    e := ${flyway:defaultSchema}.own_epoch();
    IF e.system_identifier IS NULL THEN
        RETURN ${flyway:defaultSchema}.record_epoch(${flyway:defaultSchema}.adoption_epoch(), 'adopted');
    END IF;
    RETURN ${flyway:defaultSchema}.record_epoch(
        greatest(${flyway:defaultSchema}.epoch_of(e), ${flyway:defaultSchema}.issued_epoch()) + 1024, 'advanced');
END
$$;
