-- The issuance lock was the advisory lock (oid of the resource table, 16). Advisory locks are not
-- privileges: any session of the database may take any key (every database grants CONNECT to
-- PUBLIC), and the key is no secret (it is in the functions' source, which pg_proc shows to
-- everyone). A session holding pg_advisory_lock(<oid of resource>, 16), exclusively or shared at
-- session level, made every acquisition of every resource wait (for ever under the default
-- lock_timeout: try_acquire's handover timeout does not cover the issuance lock), and
-- advance_sequence / advance_epoch too; a role with no privilege on the fence at all could do it.
--
-- The issuance lock is now a lock on the empty table issuance_gate, which only the owner role may
-- lock: acquisitions take ROW EXCLUSIVE (they share it, as they shared the advisory lock),
-- advance_sequence, advance_epoch and an adoption take EXCLUSIVE (as they took the advisory lock
-- exclusively). EXCLUSIVE conflicts with ROW EXCLUSIVE and itself, not with ACCESS SHARE, which
-- is all a session without privileges on the table gets from the lock manager (its SELECT opens
-- the table before the permission check, and the failure releases it); LOCK TABLE, TRUNCATE,
-- VACUUM, ALTER and the rest check their privilege before they lock. The order of the lock
-- against the statements around it is unchanged: the same statement takes it, where the advisory
-- lock was taken. (IssuanceLockTest.)
--
-- Left: the handover key (key space, hashtext(resource name)) is still an advisory key, for
-- V28's check without a row lock; any session may hold it and so hold off that resource's
-- acquisitions (ZF007 after the handover timeout) or, exclusively, its READ COMMITTED checks
-- (README, "What bypasses by design").
--
-- The four functions' bodies are derived from the ones in place (as V37 does): each advisory
-- issuance lock is replaced, found at least once; a body already replaced is left as it is.
CREATE TABLE IF NOT EXISTS ${flyway:defaultSchema}.issuance_gate ();
ALTER TABLE ${flyway:defaultSchema}.issuance_gate OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.issuance_gate FROM PUBLIC;
COMMENT ON TABLE ${flyway:defaultSchema}.issuance_gate IS
    'The issuance lock (V38): acquisitions lock it ROW EXCLUSIVE, advance_sequence / advance_epoch EXCLUSIVE. Never holds rows.';

DO $migration$
DECLARE
    v_shared_old text := 'PERFORM pg_advisory_xact_lock_shared(''${flyway:defaultSchema}.resource''::regclass::oid::integer, 16);';
    v_excl_old text := 'PERFORM pg_advisory_xact_lock(''${flyway:defaultSchema}.resource''::regclass::oid::integer, 16);';
    v_shared_new text := 'LOCK TABLE ${flyway:defaultSchema}.issuance_gate IN ROW EXCLUSIVE MODE;';
    v_excl_new text := 'LOCK TABLE ${flyway:defaultSchema}.issuance_gate IN EXCLUSIVE MODE;';
    v_fn text;
    v_oid pg_catalog.oid;
    v_src text;
    v_def text;
    v_new text;
BEGIN
    FOREACH v_fn IN ARRAY ARRAY['try_acquire(text,text,interval,interval)', 'issue_token(bigint)',
                                'lock_issuance(boolean)', 'advance_sequence(bigint)'] LOOP
        v_oid := pg_catalog.to_regprocedure('${flyway:defaultSchema}.' || v_fn);
        v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
        v_def := pg_catalog.pg_get_functiondef(v_oid);
        v_new := replace(replace(v_src, v_shared_old, v_shared_new), v_excl_old, v_excl_new);
        IF v_new = v_src THEN
            IF strpos(v_src, 'issuance_gate') > 0 THEN
                CONTINUE; -- replaced before
            END IF;
            RAISE EXCEPTION 'V38: %''s body has no advisory issuance lock to replace', v_fn;
        END IF;
        IF strpos(v_new, ', 16)') > 0 AND strpos(v_new, 'regclass::oid::integer, 16)') > 0 THEN
            RAISE EXCEPTION 'V38: %''s body takes the advisory issuance lock in a form this migration does not replace', v_fn;
        END IF;
        IF (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
            RAISE EXCEPTION 'V38: %''s definition does not hold its body once', v_fn;
        END IF;
        -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
        EXECUTE replace(v_def, v_src, v_new);
    END LOOP;
END
$migration$;
