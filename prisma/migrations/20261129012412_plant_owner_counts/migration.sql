-- CreateTable
CREATE TABLE "PlantOwnerCount" (
    "ownerId" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "plants" INTEGER NOT NULL
);

-- CreateIndex
CREATE INDEX "PlantTagCount_tag_idx" ON "PlantTagCount"("tag");

-- Each owner's number of plants, kept by the database as PlantTagCount is (written by hand: Prisma's schema
-- language has no triggers): every plant created, deleted or moved to another owner changes its owner's count in
-- the statement that makes the change, whichever door, process, instance or tool made it. The admin page's exact
-- totals read these rows (plants/counts.ts). The plants already stored are counted first.
INSERT INTO "PlantOwnerCount" ("ownerId", "plants")
SELECT "ownerId", COUNT(*) FROM "Plant" GROUP BY "ownerId";

CREATE TRIGGER "Plant_created_owner_count" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "PlantOwnerCount" ("ownerId", "plants") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "plants" = "plants" + 1;
END;

CREATE TRIGGER "Plant_deleted_owner_count" AFTER DELETE ON "Plant" BEGIN
  UPDATE "PlantOwnerCount" SET "plants" = "plants" - 1 WHERE "ownerId" = OLD."ownerId";
END;

CREATE TRIGGER "Plant_updated_owner_count" AFTER UPDATE OF "ownerId" ON "Plant" WHEN OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  UPDATE "PlantOwnerCount" SET "plants" = "plants" - 1 WHERE "ownerId" = OLD."ownerId";
  INSERT INTO "PlantOwnerCount" ("ownerId", "plants") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "plants" = "plants" + 1;
END;
