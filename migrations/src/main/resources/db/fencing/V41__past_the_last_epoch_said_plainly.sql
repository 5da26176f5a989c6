-- An epoch past the last one (1048575), reached through the timeline (epoch = (timeline - 1) +
-- offset grows with every promotion, and V39's advances and adoptions move 1024 at a time): the
-- acquisition was refused (2200H), as it must be, but its message named a negative "last token"
-- (epoch << 43 wraps past the largest bigint: "the epoch's last token -9223363240761753601") and
-- its hint sent the operator to advance_epoch(), which can only refuse ("past the last epoch").
-- epoch_status() said the same negative number in advance_due. Now both say that the epoch is past
-- the last one and no more tokens can be issued, as record_epoch does; within the epochs nothing
-- changes (V12's bodies otherwise). (EpochTest.)

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.exhausted(p_epoch bigint, p_token bigint, p_floor bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_epoch > 1048575 THEN
        RAISE EXCEPTION USING ERRCODE = '2200H',
            MESSAGE = format('fencing: epoch %s is past the last epoch (1048575): no more tokens can be issued', p_epoch),
            DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor, 'last_epoch', 1048575)::text,
            HINT = 'every epoch of this fence is used; advance_epoch() cannot move further';
    END IF;
    RAISE EXCEPTION USING ERRCODE = '2200H',
        MESSAGE = format('fencing: the token counter of epoch %s is exhausted (the next token would be %s, past the epoch''s last token %s)',
                         p_epoch, p_token, (p_epoch << 43) + 8796093022207),
        DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor,
                                    'last_token_of_epoch', (p_epoch << 43) + 8796093022207)::text,
        HINT = 'an operator runs SELECT fencing.advance_epoch(); tokens then continue in the next epoch';
END
$$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.epoch_status()
    RETURNS TABLE (timeline bigint, epoch bigint, epoch_offset integer,
                   adoption_pending boolean, last_token bigint, counter_left bigint, advance_due text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    e ${flyway:defaultSchema}.cluster_epoch := ${flyway:defaultSchema}.own_epoch();
    v_last bigint;
    v_epoch bigint;
    v_left bigint;
    v_due text;
BEGIN
    SELECT greatest(s.last_value, (SELECT coalesce(max(last_issued), 0)
                                     FROM ${flyway:defaultSchema}.resource WHERE issuer = 'local'))
      INTO v_last FROM ${flyway:defaultSchema}.token_seq s;
    IF e.system_identifier IS NULL THEN
        v_epoch := ${flyway:defaultSchema}.adoption_epoch();
    ELSE
        v_epoch := ${flyway:defaultSchema}.epoch_of(e);
    END IF;
    IF v_epoch > 1048575 THEN
        v_left := 0;
        v_due := format('epoch %s is past the last epoch (1048575): no more tokens can be issued', v_epoch);
    ELSE
        v_left := ((v_epoch << 43) + 8796093022207) - greatest(v_last, v_epoch << 43);
        IF v_left < 0 THEN
            v_due := format('tokens up to %s were issued, past the last token %s of epoch %s', v_last,
                            (v_epoch << 43) + 8796093022207, v_epoch);
        ELSIF v_left < 4398046511104 THEN -- 2^42: half the epoch's counter is used
            v_due := format('half the token counter of epoch %s is used (%s tokens left)', v_epoch, v_left);
        END IF;
    END IF;
    RETURN QUERY SELECT ${flyway:defaultSchema}.current_timeline(), v_epoch, e.epoch_offset,
                        e.system_identifier IS NULL, v_last, greatest(v_left, 0), v_due;
END
$$;
