-- EXPERIMENT: the floor, trigger functions that decide nothing (never on a real database).
CREATE OR REPLACE FUNCTION fencing.enforce_statement() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ BEGIN RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION fencing.enforce_row_keyed() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ BEGIN RETURN NEW; END $$;
