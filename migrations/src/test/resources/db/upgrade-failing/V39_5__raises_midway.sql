-- A migration that fails midway, for UpgradeFailureTest: it first does the worst it can to the
-- fence (an accept-all check, the protected tables' triggers dropped with their function, every
-- token forgotten, the leases gone), then its DO block raises. Flyway runs it, with the callbacks,
-- in one transaction on PostgreSQL: nothing of it may remain.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.check_token(p_resource text, p_token bigint)
    RETURNS bigint
    LANGUAGE sql
AS $$ SELECT p_token $$;
DROP FUNCTION ${flyway:defaultSchema}.enforce_statement() CASCADE;
UPDATE ${flyway:defaultSchema}.resource SET max_seen = 1;
DELETE FROM ${flyway:defaultSchema}.lease;
DO $$
BEGIN
    RAISE EXCEPTION 'V39.5 fails midway, on purpose';
END
$$;
