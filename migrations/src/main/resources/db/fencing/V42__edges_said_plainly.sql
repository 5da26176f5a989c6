-- Errors at the edges of the SQL API that were PostgreSQL's generic ones, or the fence's with the
-- wrong advice; each is now the fence's own, specific error, and nothing changes. Every other
-- behaviour is the one in place (the bodies below are V8's, V12's and V41's otherwise; the five
-- derived ones are edited in place, as V40 did).
--
-- 1. reset_external under REPEATABLE READ or SERIALIZABLE. The function reads the resource in the
--    transaction's snapshot, then locks the row (waiting for the transactions fenced by the
--    current token). A row changed after the snapshot (a check that raised max_seen, in the
--    transaction it waited for or any earlier one) cannot be locked under a snapshot: the operator
--    got PostgreSQL's "could not serialize access due to concurrent update", naming no cause, and
--    a retry under the same isolation level fails again while the resource is in use. Now the
--    same refusal (40001, nothing changed) says that reset_external must run under READ COMMITTED,
--    where the lock re-reads the row as the transactions it waited for left it. Under a snapshot
--    whose row is unchanged the reset is done as before. (BadInputSqlTest B133.)
-- 2. A missing (NULL) token for an external resource (tokens issued by ZooKeeper, etcd) was
--    ZF002 with the hint "acquire a lease and present its token": an external resource has no
--    lease here (try_acquire refuses it, ZF004). The hint now fits the resource: the token its
--    issuer gave the current holder for an external one, a lease for a local or unknown one.
--    validate_token reads the resource for that on its error path only, so it is STABLE now (it
--    was IMMUTABLE, which a function reading a table must not be); its search_path stays unset
--    (V6: it runs under its callers' pinned one). (BadInputSqlTest B132.)
-- 3. Issuance at the largest bigint. issue_token's first check called exhausted() with "the next
--    token" = greatest(floor, sequence) + 1, which overflows when the sequence is at
--    9223372036854775807: after the last token of the last epoch (1048575) was issued, or in a
--    fence whose advance_sequence of V8 to V39 left the sequence there (B131). Every acquisition
--    failed with 22003 "bigint out of range" instead of the exhaustion error. Now it is 2200H
--    saying the next token would be past the largest bigint. And exhausted()'s hint sent the
--    operator to advance_epoch() also when that can only refuse (the epoch it moves to, 1024
--    above the current or the issued one, past the last epoch): it now says that no later epoch is
--    left and no more tokens can be issued, as V41 does for an epoch past the last one.
--    (EpochTest.theLastTokenOfTheLastEpochIsFollowedByTheExhaustionError,
--    aSequenceAtTheLargestBigintIsTheExhaustionError.)
-- 4. Forged carried tokens and checked markers with 19 digits past the largest bigint
--    ('9999999999999999999'): require_fenced and is_checked took any 19 digits as a bigint, and the
--    write failed with 22003 "value ... is out of range for type bigint". Such a token is not one
--    carry() or mark_checked() can have written: now it counts as no token (ZF002, as every forged
--    one, B82 and B114). (BadInputSqlTest B134, B135.)
-- 5. advance_sequence(NULL) said "gap must be positive, was " (format's %s of a null): now "was
--    null". (BadInputSqlTest B136.)
-- 6. A check under REPEATABLE READ or SERIALIZABLE whose snapshot predates a reset_external. It
--    reads the external resource's old max_seen; the row changed after its snapshot, so it cannot
--    lock it, and a token at or below the snapshot's max_seen was refused as stale (ZF001 "a newer
--    token was issued after this transaction began", hint "do not retry") also when the reset had
--    lowered max_seen below it: the holder of the new issuer's current token was told it had lost
--    its lock. reset_external now also updates the one row of external_reset (as protect and
--    unprotect update protection_change, V17), and such a check probes that row: changed (or
--    locked) after the snapshot means a reset ran since, and the answer is 40001, whose retry
--    decides on the resource as the reset left it; unchanged means a newer token, ZF001 as before.
--    Only the refusal path of a check under a snapshot reads the row. (ResetExternalSnapshotTest.)

-- 6. ------------------------------------------------------------------------------------------
CREATE TABLE ${flyway:defaultSchema}.external_reset (
    id     boolean PRIMARY KEY DEFAULT true CHECK (id),
    resets bigint  NOT NULL DEFAULT 0
);
INSERT INTO ${flyway:defaultSchema}.external_reset DEFAULT VALUES;
ALTER TABLE ${flyway:defaultSchema}.external_reset OWNER TO "${owner_role}";
REVOKE ALL ON ${flyway:defaultSchema}.external_reset FROM PUBLIC;
COMMENT ON TABLE ${flyway:defaultSchema}.external_reset IS
    'One row, updated by every reset_external: a check under a snapshot older than a reset sees it changed (V42)';

-- 1. and 6. -----------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.reset_external(p_resource text, p_max_seen bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    r := ${flyway:defaultSchema}.find_resource(p_resource);
    IF r.issuer <> 'external' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('resource "%s" is issued by this database: its max_seen follows its leases and is never reset', r.name),
            jsonb_build_object('resource', r.name, 'issuer', r.issuer));
    END IF;
    IF p_max_seen IS NULL OR p_max_seen < 0 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('max_seen must be zero or positive, was %s', coalesce(p_max_seen::text, 'null')),
            jsonb_build_object('argument', 'max_seen', 'value', p_max_seen));
    END IF;
    BEGIN -- a subtransaction; the lock it takes stays with the transaction
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE;
        -- 6: tells the checks under a snapshot older than this reset (fence_full)
        UPDATE ${flyway:defaultSchema}.external_reset SET resets = resets + 1;
    EXCEPTION WHEN serialization_failure THEN
        -- (only under REPEATABLE READ / SERIALIZABLE: READ COMMITTED re-reads the changed row)
        RAISE EXCEPTION USING ERRCODE = '40001',
            MESSAGE = format('fencing: reset_external cannot reset resource "%s" under %s: a change committed after this transaction''s snapshot was taken (a newer token checked, or another reset); run reset_external under READ COMMITTED',
                             r.name, upper(current_setting('transaction_isolation'))),
            DETAIL = jsonb_build_object('resource', r.name, 'max_seen', p_max_seen,
                                        'isolation', current_setting('transaction_isolation'))::text,
            HINT = 'BEGIN ISOLATION LEVEL READ COMMITTED (or autocommit with default_transaction_isolation = ''read committed''): reset_external waits for the transactions fenced by the current token, then resets the row as they left it';
    END;
    UPDATE ${flyway:defaultSchema}.resource
       SET max_seen = p_max_seen, last_used = least(last_used, p_max_seen), updated_at = now()
     WHERE id = r.id;
    RETURN r.max_seen;
END
$$;

-- 2. ------------------------------------------------------------------------------------------
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.validate_token(p_resource text, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql STABLE
AS $$
BEGIN
    IF p_token IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('missing fencing token for resource "%s"', p_resource),
            jsonb_build_object('resource', p_resource, 'token', NULL),
            CASE WHEN EXISTS (SELECT FROM ${flyway:defaultSchema}.resource r
                               WHERE r.name = p_resource AND r.issuer = 'external')
                 THEN 'this resource is fenced by external tokens (it has no lease here): present the token its issuer (ZooKeeper, etcd) gave the current lock holder'
                 ELSE 'acquire a lease and present its token' END);
    ELSIF p_token <= 0 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('fencing token must be positive, was %s', p_token),
            jsonb_build_object('resource', p_resource, 'token', p_token));
    END IF;
END
$$;

-- 3. ------------------------------------------------------------------------------------------
-- p_token NULL: the next token would be past the largest bigint.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.exhausted(p_epoch bigint, p_token bigint, p_floor bigint)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_next text := coalesce(p_token::text, 'past the largest bigint 9223372036854775807');
    v_advance bigint; -- the epoch advance_epoch() would move to
BEGIN
    IF p_epoch > 1048575 THEN
        RAISE EXCEPTION USING ERRCODE = '2200H',
            MESSAGE = format('fencing: epoch %s is past the last epoch (1048575): no more tokens can be issued', p_epoch),
            DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor, 'last_epoch', 1048575)::text,
            HINT = 'every epoch of this fence is used; advance_epoch() cannot move further';
    END IF;
    v_advance := greatest(p_epoch, ${flyway:defaultSchema}.issued_epoch()) + 1024;
    IF p_token IS NULL OR v_advance > 1048575 THEN
        RAISE EXCEPTION USING ERRCODE = '2200H',
            MESSAGE = format('fencing: the token counter of epoch %s is exhausted (the next token would be %s, past the epoch''s last token %s) and no later epoch is left: no more tokens can be issued',
                             p_epoch, v_next, (p_epoch << 43) + 8796093022207),
            DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor,
                                        'last_token_of_epoch', (p_epoch << 43) + 8796093022207,
                                        'advance_epoch_to', v_advance, 'last_epoch', 1048575)::text,
            HINT = format('advance_epoch() would move to epoch %s, past the last epoch (1048575), and cannot help: every epoch of this fence is used',
                          v_advance);
    END IF;
    RAISE EXCEPTION USING ERRCODE = '2200H',
        MESSAGE = format('fencing: the token counter of epoch %s is exhausted (the next token would be %s, past the epoch''s last token %s)',
                         p_epoch, v_next, (p_epoch << 43) + 8796093022207),
        DETAIL = jsonb_build_object('epoch', p_epoch, 'token', p_token, 'floor', p_floor,
                                    'last_token_of_epoch', (p_epoch << 43) + 8796093022207)::text,
        HINT = 'an operator runs SELECT fencing.advance_epoch(); tokens then continue in the next epoch';
END
$$;

-- 3 (issue_token), 4 (require_fenced, is_checked), 6 (fence_full), 5 (advance_sequence): edited
-- in place.
DO $migration$
DECLARE
    v_edit text[];
    v_oid pg_catalog.oid;
    v_src text;
    v_def text;
    v_new text;
    v_count integer;
BEGIN
    FOREACH v_edit SLICE 1 IN ARRAY ARRAY[
        -- function, the text replaced, its replacement, how many times the text occurs
        ARRAY['${flyway:defaultSchema}.issue_token(bigint)',
              'PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, greatest(v_need, v_last) + 1, p_floor);',
              'PERFORM ${flyway:defaultSchema}.exhausted(v_epoch, CASE WHEN greatest(v_need, v_last) < 9223372036854775807 THEN greatest(v_need, v_last) + 1 END, p_floor); -- V42: NULL past the largest bigint',
              '1'],
        ARRAY['${flyway:defaultSchema}.require_fenced(text,regclass)',
              'IF v_token IS NULL OR v_token !~ ''^[0-9]{1,19}$'' THEN',
              'IF v_token IS NULL OR v_token !~ ''^[0-9]{1,19}$'' OR (length(v_token) = 19 AND v_token COLLATE "C" > ''9223372036854775807'') THEN -- V42: a bigint',
              '1'],
        ARRAY['${flyway:defaultSchema}.is_checked(bigint)',
              'v_parts[2] ~ ''^[0-9]{1,19}$''',
              'v_parts[2] ~ ''^[0-9]{1,19}$'' AND (length(v_parts[2]) < 19 OR v_parts[2] COLLATE "C" <= ''9223372036854775807'') /* V42: a bigint */',
              '2'],
        ARRAY['${flyway:defaultSchema}.fence_full(text,bigint)',
              E'            IF p_token <= r.max_seen THEN\n                PERFORM ${flyway:defaultSchema}.raise_error(\'ZF001\',',
              E'            -- V42: below the snapshot\'s max_seen, but a reset_external since may have lowered\n'
              '            -- it below this token: the retry decides (external_reset: see V42)\n'
              '            IF p_token <= r.max_seen AND r.issuer = \'external\' THEN\n'
              '                BEGIN\n'
              '                    PERFORM FROM ${flyway:defaultSchema}.external_reset FOR SHARE NOWAIT;\n'
              '                EXCEPTION WHEN serialization_failure OR lock_not_available THEN\n'
              '                    RAISE EXCEPTION USING ERRCODE = \'40001\',\n'
              '                        MESSAGE = format(\'fencing: resource "%s" was changed after this transaction began, and reset_external ran since (it may have lowered max_seen below token %s); retry the transaction\',\n'
              '                                         r.name, p_token),\n'
              '                        DETAIL = jsonb_build_object(\'resource\', r.name, \'token\', p_token)::text,\n'
              '                        HINT = \'no newer token is known to this transaction; its retry decides on the resource as the reset left it\';\n'
              '                END;\n'
              '            END IF;\n'
              '            IF p_token <= r.max_seen THEN\n                PERFORM ${flyway:defaultSchema}.raise_error(\'ZF001\',',
              '1'],
        ARRAY['${flyway:defaultSchema}.advance_sequence(bigint)',
              'format(''gap must be positive, was %s'', p_gap)',
              'format(''gap must be positive, was %s'', coalesce(p_gap::text, ''null''))',
              '1']
    ] LOOP
        v_oid := pg_catalog.to_regprocedure(v_edit[1]);
        v_src := (SELECT p.prosrc FROM pg_catalog.pg_proc p WHERE p.oid = v_oid);
        v_def := pg_catalog.pg_get_functiondef(v_oid);
        IF strpos(v_src, v_edit[3]) > 0 THEN
            CONTINUE; -- applied before
        END IF;
        v_count := (length(v_src) - length(replace(v_src, v_edit[2], ''))) / length(v_edit[2]);
        IF v_count <> v_edit[4]::integer THEN
            RAISE EXCEPTION 'V42: the body of % holds "%" % times, not %', v_edit[1], v_edit[2], v_count, v_edit[4];
        END IF;
        IF (length(v_def) - length(replace(v_def, v_src, ''))) / length(v_src) <> 1 THEN
            RAISE EXCEPTION 'V42: the definition of % does not hold its body once', v_edit[1];
        END IF;
        v_new := replace(v_src, v_edit[2], v_edit[3]);
        -- CREATE OR REPLACE keeps the owner, the grants, SECURITY DEFINER and the search_path
        EXECUTE replace(v_def, v_src, v_new);
    END LOOP;
END
$migration$;
