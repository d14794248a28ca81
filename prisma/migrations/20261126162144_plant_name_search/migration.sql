-- The name search's trigram index (src/server/plants/search.ts), written by hand: Prisma's schema language has
-- no virtual tables. An FTS5 table with the trigram tokenizer holds every folded name (its rowid is the plant's
-- id) and finds a substring of three characters or more through its trigrams: a phrase query for the text is
-- exactly "contains it". Contentless (content=''): it stores the index and not the names, which "Plant" has;
-- contentless_delete=1 lets the triggers delete by id alone. case_sensitive 1: the names and queries are folded
-- already (foldForSearch), so the index compares them as they are, like instr(). Its own tables
-- ("PlantNameSearch_data", "_idx", "_docsize", "_config") are declared external to Prisma (engines.ts), so a
-- schema diff leaves them be.
CREATE VIRTUAL TABLE "PlantNameSearch" USING fts5("nameFolded", content='', contentless_delete=1, tokenize='trigram case_sensitive 1', detail=full);

-- Kept by the database in the statement that changes the plant, whoever writes it. A name not folded yet (rows
-- older than "nameFolded", until the service folds them) is not in the index, and not searched before it is.
CREATE TRIGGER "Plant_created_name_search" AFTER INSERT ON "Plant" WHEN NEW."nameFolded" IS NOT NULL BEGIN
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") VALUES (NEW."id", NEW."nameFolded");
END;

CREATE TRIGGER "Plant_renamed_name_search" AFTER UPDATE OF "id", "nameFolded" ON "Plant"
WHEN OLD."id" IS NOT NEW."id" OR OLD."nameFolded" IS NOT NEW."nameFolded" BEGIN
  DELETE FROM "PlantNameSearch" WHERE rowid = OLD."id";
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT NEW."id", NEW."nameFolded" WHERE NEW."nameFolded" IS NOT NULL;
END;

CREATE TRIGGER "Plant_deleted_name_search" AFTER DELETE ON "Plant" BEGIN
  DELETE FROM "PlantNameSearch" WHERE rowid = OLD."id";
END;

-- The plants there are already (about 4 s per million here, while the write lock is held).
INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT "id", "nameFolded" FROM "Plant" WHERE "nameFolded" IS NOT NULL;
