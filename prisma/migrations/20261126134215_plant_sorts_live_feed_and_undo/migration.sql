-- CreateTable
CREATE TABLE "PlantChange" (
    "seq" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "plantId" BIGINT NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "tag" TEXT,
    "atMs" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "PlantTombstone" (
    "id" BIGINT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "tag" TEXT,
    "ownerId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "deletedById" INTEGER NOT NULL,
    "deletedAtMs" BIGINT NOT NULL
);

-- CreateIndex
CREATE INDEX "PlantChange_atMs_idx" ON "PlantChange"("atMs");

-- CreateIndex
CREATE INDEX "PlantTombstone_deletedAtMs_idx" ON "PlantTombstone"("deletedAtMs");

-- CreateIndex
CREATE INDEX "Plant_nameFolded_id_idx" ON "Plant"("nameFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_nameFolded_id_idx" ON "Plant"("ownerId", "nameFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_createdAt_id_idx" ON "Plant"("createdAt", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_createdAt_id_idx" ON "Plant"("ownerId", "createdAt", "id");

-- The live feed's log (written by hand: Prisma's schema language has no triggers). Every committed change of
-- a plant leaves one row, written by the database in the statement that changes the plant, whichever door or
-- process made it: the admin page's live feed (src/server/plants/live/) reads it on every instance. A
-- rename or re-tag that changes nothing leaves nothing; folding names (nameFolded) is not a change.
CREATE TRIGGER "Plant_created_change_log" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (NEW."id", NEW."ownerId", 'created', NEW."name", NEW."tag", CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;

CREATE TRIGGER "Plant_updated_change_log" AFTER UPDATE OF "name", "tag" ON "Plant"
WHEN OLD."name" IS NOT NEW."name" OR OLD."tag" IS NOT NEW."tag" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (NEW."id", NEW."ownerId", 'updated', NEW."name", NEW."tag", CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;

CREATE TRIGGER "Plant_deleted_change_log" AFTER DELETE ON "Plant" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (OLD."id", OLD."ownerId", 'deleted', NULL, NULL, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
