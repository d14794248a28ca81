-- The name search's index for one and two characters (src/server/plants/search-postgresql.ts): pg_trgm takes
-- no trigram from a query that short, so before this a search of "zq" or "ж" tested every name in the store
-- (seconds at 10 million plants). Every one- and two-character substring of a folded name is a key of this GIN
-- index, so for such q "the folded name contains q" is exactly "q is one of the name's keys":
-- `plant_name_grams("nameFolded") @> ARRAY[q]` (`%` and `_` are plain text here). Substrings are of characters
-- (code points), as the service counts a query's length.
-- * Prisma's schema cannot declare an index on an expression, and its diff leaves one alone (the drift test).
-- * The function is IMMUTABLE (an index needs that) and calls only built-ins. Repeated keys are left in: GIN
--   keeps each key of a row once. PL/pgSQL, because it costs ~8 µs a name here against ~40 µs for the same in
--   one SQL statement (generate_series and an aggregate, run as a query per call).
-- * IF NOT EXISTS: building the index here blocks writes to "Plant" while it builds (about 5 minutes per 10
--   million plants here; reads go on). To avoid that, create the function below and build the index beforehand
--   without blocking, and this finds both there:
--     CREATE INDEX CONCURRENTLY "Plant_nameFolded_grams_idx" ON "Plant" USING GIN (plant_name_grams("nameFolded"));
-- * ANALYZE: the search reads the planner's statistics of this expression to tell a common pair of characters
--   (walk the rows) from a rare one (read the index), and an index brings none until the table is analyzed.
--   It samples 30,000 rows whatever the table's size: a second or two.
CREATE OR REPLACE FUNCTION plant_name_grams(folded TEXT) RETURNS TEXT[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  characters TEXT[] := string_to_array(folded, NULL);
  grams TEXT[] := characters;
BEGIN
  FOR position IN 1 .. coalesce(array_length(characters, 1), 0) - 1 LOOP
    grams := array_append(grams, characters[position] || characters[position + 1]);
  END LOOP;
  RETURN grams;
END
$$;

CREATE INDEX IF NOT EXISTS "Plant_nameFolded_grams_idx" ON "Plant" USING GIN (plant_name_grams("nameFolded"));

ANALYZE "Plant";
