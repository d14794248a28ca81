-- How common each trigram of the folded names is, for the name search (src/server/plants/search-postgresql.ts).
-- pg_trgm's index answers `LIKE '%q%'` by reading the list of every trigram of q: a long query of common
-- trigrams ("calathea fern 5000000") read ~7,900 index pages for one plant at 10 million plants. With the
-- frequencies below, the search asks the index for its rarest few trigrams only and tests the whole query
-- on the few rows they leave (docs/performance.md, "Round five: PostgreSQL long searches").
-- * An extended statistics object on an expression (PostgreSQL 14+): ANALYZE (and so autovacuum) keeps, for
--   pg_trgm's trigrams of the sampled names (`show_trgm`), the most common ones with their frequencies
--   (pg_stats_ext_exprs.most_common_elems, up to ten times the statistics target); a trigram not listed is
--   rarer than the least listed one. Nothing is kept per row and writes cost nothing more; ANALYZE computes
--   the trigrams of its 30,000 sampled names, a fraction of a second.
-- * pg_trgm's schema, wherever it was installed (as the index's migration finds it).
-- * Without these statistics (before the first ANALYZE, or a role that may not read them) the search asks
--   the index for every trigram, as before.
DO $$
DECLARE
  trgm_schema TEXT;
BEGIN
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE STATISTICS IF NOT EXISTS "Plant_nameFolded_trigrams" ON (%I.show_trgm("nameFolded")) FROM "Plant"', trgm_schema);
END
$$;

ANALYZE "Plant";
