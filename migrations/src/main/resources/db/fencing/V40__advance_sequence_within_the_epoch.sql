-- advance_sequence(gap) moves the counter within the current epoch, as the README says, and no
-- further. Before V40 it refused only a gap past the largest bigint: a larger gap than the
-- epoch's counter has left moved the sequence into a later epoch's range (epoch 128 for a gap of
-- 2^50), and every acquisition failed from then on (2200H, "the token counter of epoch 0 is
-- exhausted") until advance_epoch(), which then moved issuance above the sequence's epoch: the
-- epochs in between spent for nothing. The largest gap allowed (9223372036854775807 - base) left
-- the sequence at the largest bigint: every acquisition failed with 22003 "bigint out of range"
-- (issue_token's "next token would be" overflowed), and advance_epoch() could not help: the epoch
-- of the sequence is the last one (1048575), so no epoch is left above it (2200H). The fence was
-- dead for good, by one operator call with a number it accepted.
--
-- Now a gap that would move the sequence past the last token of the epoch the next issuance uses
-- (the recorded one, or the one an adoption takes) is refused with ZF006 naming the largest gap
-- possible, and nothing changes; the bigint check (B70) stays first and unchanged. Everything else
-- is V32's: the exclusive issuance lock (V38: EXCLUSIVE on issuance_gate, taken through the body V38
-- derived) before the read. (BadInputSqlTest B130, B131.)
DO $migration$
DECLARE
    v_oid pg_catalog.oid := pg_catalog.to_regprocedure('${flyway:defaultSchema}.advance_sequence(bigint)');
    v_src text;
    v_def text;
    v_anchor text := '    RETURN setval(''${flyway:defaultSchema}.token_seq'', v_base + p_gap);';
    v_check text;
BEGIN
    v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
    v_def := pg_catalog.pg_get_functiondef(v_oid);
    IF strpos(v_src, 'past the last token') > 0 THEN
        RETURN; -- applied before
    END IF;
    IF (length(v_src) - length(replace(v_src, v_anchor, ''))) / length(v_anchor) <> 1 THEN
        RAISE EXCEPTION 'V40: advance_sequence''s body does not end in the setval this migration extends';
    END IF;
    IF (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
        RAISE EXCEPTION 'V40: advance_sequence''s definition does not hold its body once';
    END IF;
    v_check := $check$    -- V40: within the epoch the next issuance uses (recorded, or the one an adoption takes)
    DECLARE
        v_epoch bigint := coalesce(${flyway:defaultSchema}.epoch_of(${flyway:defaultSchema}.own_epoch()),
                                   ${flyway:defaultSchema}.adoption_epoch());
        v_last_token bigint := (v_epoch << 43) + 8796093022207;
    BEGIN
        IF v_epoch > 1048575 OR p_gap > v_last_token - v_base THEN
            PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
                format('gap %s would move the token sequence past the last token %s of epoch %s; the largest gap possible is %s (run advance_epoch() to issue in a later epoch)',
                       p_gap, CASE WHEN v_epoch > 1048575 THEN 'none' ELSE v_last_token::text END, v_epoch,
                       greatest(CASE WHEN v_epoch > 1048575 THEN 0 ELSE v_last_token - v_base END, 0)),
                jsonb_build_object('argument', 'gap', 'value', p_gap, 'epoch', v_epoch,
                                   'max', greatest(CASE WHEN v_epoch > 1048575 THEN 0 ELSE v_last_token - v_base END, 0)));
        END IF;
    END;
$check$;
    -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
    EXECUTE replace(v_def, v_src, replace(v_src, v_anchor, v_check || v_anchor));
END
$migration$;
