-- A leftover of the reviews (docs/ARCHITECTURE.md, "Leftovers of the reviews", second round).
--
-- set_advisory_key_space(space) returns the key space it replaces, read from resource.lock_space's
-- column default. PostgreSQL prints a negative integer default as '-5'::integer, and V28's
-- pattern '^-?[0-9]+' must match at the start, where the quote stands: the previous space came
-- back NULL whenever it was negative. It now skips an opening quote, as the JDBC client's learning
-- query does (CheckForms). Everything else is V28's definition, unchanged: what the function
-- locks, updates and rewrites, SECURITY DEFINER, its search_path; CREATE OR REPLACE keeps its
-- owner and privileges (only the owner role may call it). (AdvisoryKeySpaceTest.)
-- Depends on nothing after V32.

-- set_advisory_key_space(space): V28's, returning a negative previous space (see the head).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.set_advisory_key_space(p_space integer)
    RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_previous integer;
    v_function regprocedure;
    v_def text;
BEGIN
    IF p_space IS NULL THEN
        PERFORM ${flyway:defaultSchema}.raise_error('ZF006', 'the advisory key space must not be null',
            jsonb_build_object('argument', 'space', 'value', NULL));
    END IF;
    LOCK TABLE ${flyway:defaultSchema}.resource IN ACCESS EXCLUSIVE MODE;
    -- the default as PostgreSQL prints it: 5, or '-5'::integer
    SELECT pg_catalog.substring(pg_get_expr(d.adbin, d.adrelid), '^''?(-?[0-9]+)')::integer INTO v_previous
      FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE d.adrelid = '${flyway:defaultSchema}.resource'::regclass AND a.attname = 'lock_space';
    UPDATE ${flyway:defaultSchema}.resource SET lock_space = p_space WHERE lock_space <> p_space;
    EXECUTE format('ALTER TABLE ${flyway:defaultSchema}.resource ALTER COLUMN lock_space SET DEFAULT %s', p_space);
    FOREACH v_function IN ARRAY ARRAY['${flyway:defaultSchema}.check_one(text,bigint)',
                                      '${flyway:defaultSchema}.check_token(text,bigint)',
                                      '${flyway:defaultSchema}.check_tokens(text[],bigint[])',
                                      '${flyway:defaultSchema}.check_tokens_if_written(text[],bigint[])',
                                      '${flyway:defaultSchema}.fence(text,bigint)']::regprocedure[]
    LOOP
        v_def := pg_get_functiondef(v_function);
        IF (SELECT count(*) FROM regexp_matches(v_def, '-?[0-9]+ /\* key space \*/', 'g')) <> 2 THEN
            RAISE EXCEPTION 'fencing: % does not carry the key space where set_advisory_key_space expects it', v_function;
        END IF;
        EXECUTE regexp_replace(v_def, '-?[0-9]+ /\* key space \*/', p_space || ' /* key space */', 'g');
    END LOOP;
    RETURN v_previous;
END
$$;
