-- The name search's trigram index (src/server/plants/search.ts): pg_trgm's GIN index on the folded name, which
-- serves `"nameFolded" LIKE '%…%'` for three characters or more. Prisma's own line would be
--   CREATE INDEX "Plant_nameFolded_trgm_idx" ON "Plant" USING GIN ("nameFolded" gin_trgm_ops);
-- written by hand around it:
-- * pg_trgm ships with PostgreSQL (Debian's postgresql-15 has it) and is a trusted extension (PostgreSQL 13+):
--   a role that may CREATE in this database, such as its owner, installs it without being a superuser. A role
--   that may not gets a clear refusal here, and the migration changes nothing (it runs in one transaction):
--   someone who may (the database's owner, or a superuser) runs `CREATE EXTENSION pg_trgm;` in this database
--   once, and the next start goes on. Where it is installed already (in any schema), it is used as it is.
-- * IF NOT EXISTS: on a large table, building the index here blocks writes to "Plant" while it builds (about a
--   minute per 10 million plants here; reads go on). To avoid that, build it beforehand without blocking:
--   CREATE INDEX CONCURRENTLY "Plant_nameFolded_trgm_idx" ON "Plant" USING GIN ("nameFolded" gin_trgm_ops);
--   and this finds it there. Existing rows are indexed as the index is built: nothing else to backfill.
DO $$
DECLARE
  trgm_schema TEXT;
BEGIN
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  IF trgm_schema IS NULL THEN
    BEGIN
      CREATE EXTENSION pg_trgm;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE EXCEPTION 'the name search needs the pg_trgm extension, and this role (%) may not install it in database %', current_user, current_database()
        USING HINT = 'Ask the database''s owner or a superuser to run: CREATE EXTENSION pg_trgm; in that database, then start again.';
    END;
    trgm_schema := current_schema();
  END IF;
  EXECUTE format('CREATE INDEX IF NOT EXISTS "Plant_nameFolded_trgm_idx" ON "Plant" USING GIN ("nameFolded" %I.gin_trgm_ops)', trgm_schema);
END
$$;
