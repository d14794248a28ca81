-- CreateTable
CREATE TABLE "PlantTagCount" (
    "ownerId" INTEGER NOT NULL,
    "tag" TEXT NOT NULL,
    "plants" INTEGER NOT NULL,

    PRIMARY KEY ("ownerId", "tag")
);

-- CreateIndex
CREATE INDEX "PlantTagCount_ownerId_plants_tag_idx" ON "PlantTagCount"("ownerId", "plants" DESC, "tag");

-- The counts are kept by the database (written by hand: Prisma's schema language has no triggers): every plant
-- created, deleted, re-tagged or moved to another owner changes its owner's count of its tag in the statement that
-- makes the change, whichever door, process, instance or tool made it. A count that reaches 0 is deleted, so an
-- owner's rows are the tags they use. The plants already stored are counted first.
INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants")
SELECT "ownerId", "tag", COUNT(*) FROM "Plant" WHERE "tag" IS NOT NULL GROUP BY "ownerId", "tag";

CREATE TRIGGER "Plant_created_tag_count" AFTER INSERT ON "Plant" WHEN NEW."tag" IS NOT NULL BEGIN
  INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants") VALUES (NEW."ownerId", NEW."tag", 1)
  ON CONFLICT ("ownerId", "tag") DO UPDATE SET "plants" = "plants" + 1;
END;

CREATE TRIGGER "Plant_deleted_tag_count" AFTER DELETE ON "Plant" WHEN OLD."tag" IS NOT NULL BEGIN
  UPDATE "PlantTagCount" SET "plants" = "plants" - 1 WHERE "ownerId" = OLD."ownerId" AND "tag" = OLD."tag";
  DELETE FROM "PlantTagCount" WHERE "ownerId" = OLD."ownerId" AND "tag" = OLD."tag" AND "plants" <= 0;
END;

CREATE TRIGGER "Plant_updated_tag_count" AFTER UPDATE OF "tag", "ownerId" ON "Plant"
WHEN OLD."tag" IS NOT NEW."tag" OR OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  UPDATE "PlantTagCount" SET "plants" = "plants" - 1 WHERE OLD."tag" IS NOT NULL AND "ownerId" = OLD."ownerId" AND "tag" = OLD."tag";
  DELETE FROM "PlantTagCount" WHERE OLD."tag" IS NOT NULL AND "ownerId" = OLD."ownerId" AND "tag" = OLD."tag" AND "plants" <= 0;
  INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants") SELECT NEW."ownerId", NEW."tag", 1 WHERE NEW."tag" IS NOT NULL
  ON CONFLICT ("ownerId", "tag") DO UPDATE SET "plants" = "plants" + 1;
END;
