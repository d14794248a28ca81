-- A plant's id is part of what a list shows: a change of it (only SQL outside the app makes one; the API keeps
-- ids) bumps its owner's version like a rename, so no kept answer or 304 outlives it
-- (src/server/http/rest/kept-answers.ts).
DROP TRIGGER "Plant_updated_list_version";

CREATE TRIGGER "Plant_updated_list_version" AFTER UPDATE OF "id", "name", "tag", "nameFolded", "ownerId" ON "Plant"
WHEN OLD."id" IS NOT NEW."id" OR OLD."name" IS NOT NEW."name" OR OLD."tag" IS NOT NEW."tag" OR OLD."nameFolded" IS NOT NEW."nameFolded" OR OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;
