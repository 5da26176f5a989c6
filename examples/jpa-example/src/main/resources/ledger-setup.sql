-- The application's side of the deployment, run once by the deployer after the fence's migrations
-- (LedgerJpaApp setup does both). ${fencing_app} is the fence's application role (--app-role),
-- ${app_login} the login the application connects as. Nothing here needs a superuser: a deployer
-- with CREATEROLE that owns the database runs it (on PostgreSQL 16 it administers the roles it
-- created, so it may grant ${fencing_app}; with roles an administrator created, the administrator
-- runs the GRANT).

-- The application's table. It belongs to the deployer, never to the login the application uses:
-- an owner could disable the fence's trigger below.
CREATE TABLE ledger_entry (
    id     bigserial PRIMARY KEY,          -- a sequence: the login needs USAGE on it (below)
    text   text      NOT NULL,
    amount bigint    NOT NULL
);

-- The application's login: a member of the fence's application role, with only what it needs.
CREATE ROLE ${app_login} LOGIN;           -- in production: LOGIN PASSWORD '...' (or your IAM setup)
GRANT ${fencing_app} TO ${app_login};
GRANT SELECT, INSERT, UPDATE, DELETE ON ledger_entry TO ${app_login};
GRANT USAGE ON SEQUENCE ledger_entry_id_seq TO ${app_login};   -- else: permission denied for sequence

-- Optional: PostgreSQL itself refuses every write to the table that did not pass the fence for
-- resource 'ledger', from any client (psql, a cron job, a thread with no token bound).
SELECT fencing.protect('ledger_entry', 'ledger');
