-- CreateTable
CREATE TABLE "PlantListVersion" (
    "ownerId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "version" BIGINT NOT NULL
);

-- The REST list's versions (written by hand: Prisma's schema language has no triggers). Every committed change
-- a list could show (a plant created, deleted, renamed, re-tagged, its folded name filled in, or moved to
-- another owner) bumps its owner's row in the statement that makes it, whichever door, process or instance
-- made it; src/server/plants/versions.ts reads them. A change that changes nothing bumps nothing.
CREATE TRIGGER "Plant_created_list_version" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;

CREATE TRIGGER "Plant_deleted_list_version" AFTER DELETE ON "Plant" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (OLD."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;

CREATE TRIGGER "Plant_updated_list_version" AFTER UPDATE OF "name", "tag", "nameFolded", "ownerId" ON "Plant"
WHEN OLD."name" IS NOT NEW."name" OR OLD."tag" IS NOT NEW."tag" OR OLD."nameFolded" IS NOT NEW."nameFolded" OR OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;

-- A plant that leaves an owner changes that owner's list too.
CREATE TRIGGER "Plant_moved_list_version" AFTER UPDATE OF "ownerId" ON "Plant"
WHEN OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (OLD."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;
