-- Safety defects found by attacking the fence as the application role (issue 12). Each part names
-- the test that shows it; everything not named here is as in V1-V7.
--
-- 1. Token 0 was accepted on a resource created but never acquired (max_seen = 0): V6's fast path
--    in fence() (token = max_seen) ran before validate_token. The fast path now requires a
--    positive token; anything else takes the full path, which validates first (ZF002 for NULL,
--    ZF006 for <= 0). fence() is behind every accepting path: check_token, check_tokens, the
--    protected tables' check of a carried token, external and strict resources.
--    (ZeroTokenTest)
--
-- 2. advance_sequence(gap), the operator's step after a failover or restore, took its base from
--    max_seen of every resource, external ones included: an application-role client could push an
--    external resource to 9223372036854775807 and make the step fail. The base is now what this
--    database issued: the sequence and last_issued of local resources. External tokens are
--    numbers of another issuer and never meet the sequence. An external resource pushed to the
--    largest bigint can accept no greater token (only that one): reset_external(resource,
--    max_seen), an operator command, lowers its max_seen. (AdvanceSequenceTest)
--
-- 3. record_rejection(resource, token, sqlstate) recorded whatever it was given. A refusal the
--    database raises (ZF001, ZF002, ZF003 naming a resource) now carries a receipt in its DETAIL:
--    "<refused at, µs since 1970>.<backend pid>.<random id>.<mac>", the MAC a SHA-256 keyed with
--    the owner-only secret of marker_secret over reason, token, resource and the rest of the
--    receipt. record_rejection(refusal) takes that DETAIL (the JSON object, unchanged, from any
--    client), verifies the receipt and records it at most once (a second call returns the first
--    row's id). A refusal the client made itself because its lease is lost (reason "lease_lost",
--    no receipt) is recorded only when the database agrees: the token was issued for the
--    resource and its lease is released, expired or superseded. The three-argument form is
--    dropped. (RejectionReceiptTest)
--
-- 4. carry() set fencing.tokens transaction-locally, but the triggers read the setting whatever
--    its scope, so a session-level value (set_config(..., false), SET) was honoured in later
--    transactions. carry() now writes, transaction-locally, a stamp fencing.carry_stamp =
--    "<transaction start, µs>/<random>" and fencing.tokens = "<stamp>|resource token,...". The
--    triggers honour carried tokens only when fencing.tokens starts with the stamp and the stamp's
--    time is this transaction's now(). A session-level fencing.tokens outlives its transaction but
--    the transaction-local stamp does not; a later transaction has another start time, or (two
--    transactions of one multi-statement string share their start time) a stamp of its own. No
--    transaction id is assigned to carry. (SessionCarryTest)

-- ---------------------------------------------------------------------------------------------
-- 1. fence(): the fast path only for positive tokens
-- ---------------------------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.fence(p_resource text, p_token bigint)
    RETURNS boolean -- true when this call advanced max_seen
    LANGUAGE plpgsql
AS $$
DECLARE
    r ${flyway:defaultSchema}.resource;
BEGIN
    -- The common case in one query (V6). Only a positive token may take it: a resource that was
    -- created but never acquired has max_seen = 0, and token 0 must be refused, not matched.
    IF p_token > 0 AND current_setting('transaction_isolation') = 'read committed' THEN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource
         WHERE name = p_resource AND max_seen = p_token AND NOT strict_mode
           FOR SHARE;
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN false;
        END IF;
    END IF;

    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    r := ${flyway:defaultSchema}.find_resource(p_resource);

    IF r.strict_mode THEN
        UPDATE ${flyway:defaultSchema}.resource
           SET max_seen = p_token, last_used = p_token, last_used_xid = pg_current_xact_id(), updated_at = now()
         WHERE id = r.id AND max_seen <= p_token AND last_used < p_token
           AND (issuer = 'external' OR p_token <= last_issued);
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN p_token > r.max_seen;
        END IF;
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
        IF r.last_used = p_token AND r.last_used_xid = pg_current_xact_id() THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN false; -- this transaction already used it
        END IF;
        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);
        RAISE EXCEPTION 'fencing: strict check of % on "%" fell through', p_token, r.name; -- unreachable
    END IF;

    IF r.issuer = 'external' AND p_token > r.max_seen THEN
        -- The row lock of the UPDATE holds off later advancers until this transaction ends.
        UPDATE ${flyway:defaultSchema}.resource SET max_seen = p_token, updated_at = now()
         WHERE id = r.id AND max_seen < p_token;
        IF FOUND THEN
            PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
            RETURN true;
        END IF;
        -- a concurrent transaction advanced it first: judge against the new value below
    END IF;

    -- The locking read runs only when no UPDATE above matched: never FOR SHARE followed by UPDATE.
    IF current_setting('transaction_isolation') = 'read committed' THEN
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
    ELSE
        -- Under REPEATABLE READ / SERIALIZABLE a row updated after the snapshot cannot be locked
        -- (40001). Every such update raised max_seen, so a token not above the snapshot's max_seen
        -- is certainly stale: say so, rather than invite a retry. (A subtransaction, so only here.)
        BEGIN
            SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR SHARE;
        EXCEPTION WHEN serialization_failure THEN
            IF p_token <= r.max_seen THEN
                PERFORM ${flyway:defaultSchema}.raise_error('ZF001',
                    format('stale fencing token %s for resource "%s": a newer token was issued after this transaction began',
                           p_token, r.name),
                    jsonb_build_object('resource', r.name, 'token', p_token, 'max_seen', NULL, 'reason', 'stale_token'),
                    'this client no longer holds the lease; do not retry the transaction');
            END IF;
            RAISE;
        END;
    END IF;
    IF p_token <> r.max_seen THEN
        PERFORM ${flyway:defaultSchema}.refuse(r, p_token);
        RAISE EXCEPTION 'fencing: check of % on "%" fell through', p_token, r.name; -- unreachable
    END IF;
    PERFORM ${flyway:defaultSchema}.mark_checked(r.id, p_token);
    RETURN false;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 2. The operator's step cannot be blocked by numbers a client or an outside issuer can push
-- ---------------------------------------------------------------------------------------------

-- advance_sequence(gap): operator command after failover to an async replica, restore or PITR,
-- when committed issuances may have been lost. Moves the sequence past everything this database
-- issued (the sequence itself, last_issued of every local resource) plus gap. External resources'
-- max_seen are another issuer's numbers and play no part. Not granted to the application role.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.advance_sequence(p_gap bigint)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_base bigint;
BEGIN
    IF p_gap IS NULL OR p_gap < 1 THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', format('gap must be positive, was %s', p_gap),
            jsonb_build_object('argument', 'gap', 'value', p_gap));
    END IF;
    -- (max_seen <= last_issued holds for local resources: a table constraint of V1)
    SELECT greatest(s.last_value, (SELECT coalesce(max(last_issued), 0)
                                     FROM ${flyway:defaultSchema}.resource WHERE issuer = 'local'))
      INTO v_base FROM ${flyway:defaultSchema}.token_seq s;
    IF p_gap > 9223372036854775807 - v_base THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            format('gap %s would move the token sequence past the largest bigint; the largest gap possible is %s',
                   p_gap, 9223372036854775807 - v_base),
            jsonb_build_object('argument', 'gap', 'value', p_gap, 'max', 9223372036854775807 - v_base));
    END IF;
    RETURN setval('${flyway:defaultSchema}.token_seq', v_base + p_gap);
END
$$;

-- reset_external(resource, max_seen): operator command. Sets max_seen of an external resource,
-- lower if need be, and returns the previous value. For an external resource that a client pushed
-- out of the issuer's range (up to the largest bigint, which no later token can pass): give it the
-- issuer's current token, once the issuer and every holder of a token above it are known to be
-- gone. Waits for the open transactions fenced by the current max_seen. Not granted to the
-- application role.
CREATE FUNCTION ${flyway:defaultSchema}.reset_external(p_resource text, p_max_seen bigint)
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
    SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE id = r.id FOR NO KEY UPDATE;
    UPDATE ${flyway:defaultSchema}.resource
       SET max_seen = p_max_seen, last_used = least(last_used, p_max_seen), updated_at = now()
     WHERE id = r.id;
    RETURN r.max_seen;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 3. Refusal receipts; the rejection log holds only refusals that happened
-- ---------------------------------------------------------------------------------------------

ALTER TABLE ${flyway:defaultSchema}.rejection
    ADD COLUMN receipt text UNIQUE,       -- the receipt of a refusal by the database (NULL: lease_lost)
    ADD COLUMN refused_at timestamptz;    -- when the database refused (from the receipt)

-- The MAC of a receipt: keyed with the owner-only secret, over everything the receipt attests.
-- Truncated to 128 bits, so its SHA-256 state is not exposed (no length extension).
CREATE FUNCTION ${flyway:defaultSchema}.receipt_mac(p_reason text, p_token bigint, p_stamp text, p_resource text)
    RETURNS text
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT left(encode(sha256(convert_to(s.secret || ':receipt:' || p_reason || ':' || coalesce(p_token::text, '')
                                          || ':' || p_stamp || ':' || p_resource, 'UTF8')), 'hex'), 32)
      FROM ${flyway:defaultSchema}.marker_secret s
$$;

-- The DETAIL of a refusal (ZF001, ZF002, ZF003 naming a resource) with its reason and receipt.
-- The stamp names the refusing backend and moment, with a random id: each refusal has its own.
CREATE FUNCTION ${flyway:defaultSchema}.with_receipt(p_code text, p_detail jsonb)
    RETURNS jsonb
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_reason text := coalesce(p_detail ->> 'reason',
                              CASE p_code WHEN 'ZF001' THEN 'stale_token'
                                          WHEN 'ZF002' THEN 'missing_token'
                                          ELSE 'never_issued' END);
    v_stamp text;
BEGIN
    IF NOT has_table_privilege('${flyway:defaultSchema}.marker_secret', 'SELECT') THEN
        RETURN p_detail || jsonb_build_object('reason', v_reason); -- not raised by the fence's owner
    END IF;
    v_stamp := (extract(epoch FROM clock_timestamp()) * 1000000)::bigint || '.' || pg_backend_pid()
               || '.' || left(replace(gen_random_uuid()::text, '-', ''), 16);
    RETURN p_detail || jsonb_build_object('reason', v_reason, 'receipt',
        v_stamp || '.' || ${flyway:defaultSchema}.receipt_mac(v_reason, (p_detail ->> 'token')::bigint, v_stamp,
                                                              p_detail ->> 'resource'));
END
$$;

-- Every error of the fence is raised here; refusals get their receipt.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.raise_error(code text, message text, detail jsonb, hint text DEFAULT NULL)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_detail jsonb := detail;
BEGIN
    IF code IN ('ZF001', 'ZF002', 'ZF003') AND detail ->> 'resource' IS NOT NULL THEN
        v_detail := ${flyway:defaultSchema}.with_receipt(code, detail);
    END IF;
    IF hint IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = v_detail::text;
    END IF;
    RAISE EXCEPTION USING ERRCODE = code, MESSAGE = message, DETAIL = v_detail::text, HINT = hint;
END
$$;

DROP FUNCTION ${flyway:defaultSchema}.record_rejection(text, bigint, text);

-- record_rejection(refusal): records a refusal after its transaction rolled back. refusal is the
-- refusal's DETAIL, unchanged: a JSON object with resource, token, reason and receipt. Or, for a
-- write the client refused itself because it knows its lease lost:
--   {"resource": "...", "token": <the lease's token>, "reason": "lease_lost"}
-- recorded only if the database agrees the lease is lost. max_seen and the token's holder are read
-- here. Returns the rejection id (the same id again for a receipt recorded before).
CREATE FUNCTION ${flyway:defaultSchema}.record_rejection(p_refusal text)
    RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d jsonb;
    v_resource text;
    v_token bigint;
    v_reason text;
    v_sqlstate text;
    v_receipt text;
    v_parts text[];
    v_refused_at timestamptz;
    r ${flyway:defaultSchema}.resource;
    l ${flyway:defaultSchema}.lease;
    v_holder text;
    v_id bigint;
BEGIN
    BEGIN
        d := p_refusal::jsonb;
        v_resource := d ->> 'resource';
        v_reason := d ->> 'reason';
        v_token := (d ->> 'token')::bigint;
    EXCEPTION WHEN data_exception THEN
        d := NULL;
    END;
    IF d IS NULL OR jsonb_typeof(d) <> 'object' OR v_resource IS NULL OR v_reason IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
            'record_rejection takes the DETAIL of a refusal: a JSON object with "resource", "token", "reason"'
            || ' and, for a refusal by the database, "receipt"',
            jsonb_build_object('argument', 'refusal', 'value', left(p_refusal, 200)));
    END IF;

    IF v_reason = 'lease_lost' THEN
        -- the client refused by itself: there is no receipt, so the database must agree
        v_sqlstate := 'ZF005';
        r := ${flyway:defaultSchema}.find_resource(v_resource);
        IF v_token IS NULL OR NOT EXISTS (SELECT FROM ${flyway:defaultSchema}.issuance i
                                           WHERE i.resource_id = r.id AND i.token = v_token) THEN
            PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
                format('token %s was never issued for resource "%s": there is no lease to have lost',
                       coalesce(v_token::text, 'null'), v_resource),
                jsonb_build_object('argument', 'refusal', 'resource', v_resource, 'token', v_token));
        END IF;
        SELECT * INTO l FROM ${flyway:defaultSchema}.lease WHERE resource_id = r.id;
        IF l.token = v_token AND l.holder IS NOT NULL AND l.expires_at > clock_timestamp() THEN
            RAISE EXCEPTION USING ERRCODE = '55000',
                MESSAGE = format('the lease on "%s" with token %s is still valid (until %s, database clock): a lease-lost'
                                 ' refusal is recorded once the lease is released, expired or superseded',
                                 v_resource, v_token, l.expires_at),
                DETAIL = jsonb_build_object('resource', v_resource, 'token', v_token, 'expires_at', l.expires_at)::text;
        END IF;
    ELSE
        v_sqlstate := CASE v_reason WHEN 'stale_token' THEN 'ZF001' WHEN 'token_used' THEN 'ZF001'
                                    WHEN 'missing_token' THEN 'ZF002' WHEN 'never_issued' THEN 'ZF003' END;
        v_receipt := d ->> 'receipt';
        v_parts := regexp_match(coalesce(v_receipt, ''), '^([0-9]{1,17})\.([0-9]{1,10}\.[0-9a-f]{16})\.([0-9a-f]{32})$');
        IF v_sqlstate IS NULL OR v_parts IS NULL
           OR v_parts[3] <> ${flyway:defaultSchema}.receipt_mac(v_reason, v_token, v_parts[1] || '.' || v_parts[2],
                                                                v_resource) THEN
            PERFORM ${flyway:defaultSchema}.raise_error('ZF006',
                'the refusal has no valid receipt: only a refusal this database raised can be recorded'
                || ' (pass its DETAIL unchanged)',
                jsonb_build_object('argument', 'refusal', 'resource', left(v_resource, 200), 'token', v_token,
                                   'reason', left(v_reason, 50)));
        END IF;
        v_refused_at := to_timestamp(v_parts[1]::bigint / 1000000.0);
        SELECT * INTO r FROM ${flyway:defaultSchema}.resource WHERE name = v_resource;
    END IF;

    SELECT i.holder INTO v_holder FROM ${flyway:defaultSchema}.issuance i
     WHERE i.resource_id = r.id AND i.token = v_token;
    INSERT INTO ${flyway:defaultSchema}.rejection (resource, token, max_seen, holder, reason, sqlstate, receipt, refused_at)
    VALUES (left(v_resource, 200), v_token, r.max_seen, v_holder, v_reason, v_sqlstate, v_receipt, v_refused_at)
    ON CONFLICT (receipt) DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        SELECT id INTO v_id FROM ${flyway:defaultSchema}.rejection WHERE receipt = v_receipt; -- recorded before
    END IF;
    RETURN v_id;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- 4. Carried tokens name their transaction
-- ---------------------------------------------------------------------------------------------

-- carry(resource, token): carries a token for the rest of the transaction without checking it
-- yet; the first write to a table protected by the resource checks it. Same input errors as
-- check_token. Writes fencing.carry_stamp and fencing.tokens transaction-locally (see the head
-- of this migration); assigns no transaction id.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.carry(p_resource text, p_token bigint)
    RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_started text := (extract(epoch FROM now()) * 1000000)::bigint::text;
    v_stamp text := current_setting('fencing.carry_stamp', true);
    v_tokens text;
BEGIN
    PERFORM ${flyway:defaultSchema}.validate_token(p_resource, p_token);
    PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
    IF v_stamp IS NULL OR split_part(v_stamp, '/', 1) <> v_started THEN
        -- the first carry of this transaction
        v_stamp := v_started || '/' || replace(gen_random_uuid()::text, '-', '');
        PERFORM set_config('fencing.carry_stamp', v_stamp, true);
    END IF;
    v_tokens := current_setting('fencing.tokens', true);
    IF v_tokens IS NULL OR left(v_tokens, length(v_stamp) + 1) <> v_stamp || '|' THEN
        v_tokens := v_stamp || '|'; -- whatever was there was not carried in this transaction
    END IF;
    PERFORM set_config('fencing.tokens', v_tokens || p_resource || ' ' || p_token || ',', true);
END
$$;

-- Passes when this transaction passed the fence for p_resource; else checks a token carried in
-- this transaction; else refuses with ZF002. Fails closed: unknown or malformed resources raise ZF004.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.require_fenced(p_resource text, p_table regclass)
    RETURNS void
    LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id bigint;
    v_stamp text;
    v_tokens text;
    v_pos int;
    v_token text;
BEGIN
    IF p_resource IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('a write to protected table %s has no fencing resource (the resource column is null)', p_table),
            jsonb_build_object('resource', NULL, 'table', p_table::text));
    END IF;
    SELECT id INTO v_id FROM ${flyway:defaultSchema}.resource WHERE name = p_resource;
    IF NOT FOUND THEN
        PERFORM ${flyway:defaultSchema}.validate_resource_name(p_resource);
        PERFORM ${flyway:defaultSchema}.raise_error('ZF004',
            format('unknown fencing resource "%s" protecting table %s', p_resource, p_table),
            jsonb_build_object('resource', p_resource, 'table', p_table::text),
            'a resource exists once a lease on it was acquired, or after create_resource()');
    END IF;
    IF ${flyway:defaultSchema}.is_checked(v_id) THEN
        RETURN;
    END IF;
    -- a carried token counts only if carry() wrote it in this transaction
    v_stamp := current_setting('fencing.carry_stamp', true);
    IF v_stamp <> '' AND split_part(v_stamp, '/', 1) = (extract(epoch FROM now()) * 1000000)::bigint::text THEN
        v_tokens := current_setting('fencing.tokens', true);
        IF left(v_tokens, length(v_stamp) + 1) = v_stamp || '|' THEN
            v_tokens := substr(v_tokens, length(v_stamp) + 2);
            v_pos := position(',' || p_resource || ' ' IN ',' || v_tokens);
            IF v_pos > 0 THEN
                v_token := split_part(split_part(substr(v_tokens, v_pos), ',', 1), ' ', 2);
            END IF;
        END IF;
    END IF;
    IF v_token IS NULL OR v_token !~ '^[0-9]{1,19}$' THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF002',
            format('missing fencing token for resource "%s": table %s is protected', p_resource, p_table),
            jsonb_build_object('resource', p_resource, 'token', NULL, 'table', p_table::text),
            'call fencing.check_token(resource, token) (or fencing.carry) in the transaction before writing');
    END IF;
    PERFORM ${flyway:defaultSchema}.fence(p_resource, v_token::bigint); -- leaves the marker
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Owners and grants of the new functions (CREATE OR REPLACE kept those of the replaced ones)
-- ---------------------------------------------------------------------------------------------

ALTER FUNCTION ${flyway:defaultSchema}.reset_external(text, bigint) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.receipt_mac(text, bigint, text, text) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.with_receipt(text, jsonb) OWNER TO "${owner_role}";
ALTER FUNCTION ${flyway:defaultSchema}.record_rejection(text) OWNER TO "${owner_role}";
REVOKE ALL ON FUNCTION
    ${flyway:defaultSchema}.reset_external(text, bigint),
    ${flyway:defaultSchema}.receipt_mac(text, bigint, text, text),
    ${flyway:defaultSchema}.with_receipt(text, jsonb),
    ${flyway:defaultSchema}.record_rejection(text)
FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${flyway:defaultSchema}.record_rejection(text) TO "${app_role}";
