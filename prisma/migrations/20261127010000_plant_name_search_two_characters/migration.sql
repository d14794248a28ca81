-- Two characters through the name search's trigram index (src/server/plants/search.ts), written by hand like
-- *_plant_name_search. Each folded name is now indexed with one U+0001 after it (no name or query holds a
-- control character): every substring of two characters of a name then begins some trigram of the indexed text
-- ("zq" at the end of "…zq" begins "zq" + U+0001), so the plants containing a two-character query are those of
-- the terms that begin with it, one range of the index's term list, read through the fts5vocab table
-- "PlantNameSearchTerms" (one row per term instance: term, doc = the plant's id). Queries of three characters
-- or more are unchanged: their trigrams lie within the name, never across the padding. One character still
-- walks: one that ends a name begins no trigram of it. Not two U+0001 (which would serve one character too):
-- with two, deleting plants left the index slow for every longer search ("orchid" at 1 M: 18 ms against 1.3 ms
-- with one or none; docs/performance.md, "Name search and counts at 10 M", point 5).
DROP TRIGGER "Plant_created_name_search";
DROP TRIGGER "Plant_renamed_name_search";

CREATE TRIGGER "Plant_created_name_search" AFTER INSERT ON "Plant" WHEN NEW."nameFolded" IS NOT NULL BEGIN
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") VALUES (NEW."id", NEW."nameFolded" || char(1));
END;

CREATE TRIGGER "Plant_renamed_name_search" AFTER UPDATE OF "id", "nameFolded" ON "Plant"
WHEN OLD."id" IS NOT NEW."id" OR OLD."nameFolded" IS NOT NEW."nameFolded" BEGIN
  DELETE FROM "PlantNameSearch" WHERE rowid = OLD."id";
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT NEW."id", NEW."nameFolded" || char(1) WHERE NEW."nameFolded" IS NOT NULL;
END;

CREATE VIRTUAL TABLE "PlantNameSearchTerms" USING fts5vocab("PlantNameSearch", instance);

-- The plants there are, indexed again with the padding, while the write lock is held: about as long as the first
-- indexing (*_plant_name_search: about 4 s per million names on a quiet machine; ten million had not finished after
-- 18 minutes on a saturated one). On a large store, plan it as downtime.
INSERT INTO "PlantNameSearch" ("PlantNameSearch") VALUES ('delete-all');
INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT "id", "nameFolded" || char(1) FROM "Plant" WHERE "nameFolded" IS NOT NULL;
