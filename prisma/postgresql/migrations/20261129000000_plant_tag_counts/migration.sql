-- CreateTable
CREATE TABLE "PlantTagCount" (
    "ownerId" INTEGER NOT NULL,
    "tag" TEXT NOT NULL,
    "plants" INTEGER NOT NULL,

    CONSTRAINT "PlantTagCount_pkey" PRIMARY KEY ("ownerId","tag")
);

-- CreateIndex
CREATE INDEX "PlantTagCount_ownerId_plants_tag_idx" ON "PlantTagCount"("ownerId", "plants" DESC, "tag");

-- The counts are kept by the database (written by hand: Prisma's schema language has no triggers): every plant
-- created, deleted, re-tagged or moved to another owner changes its owner's count of its tag in the statement that
-- makes the change, whichever door, process, instance or tool made it. A count that reaches 0 is deleted, so an
-- owner's rows are the tags they use. The plants already stored are counted first.
INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants")
SELECT "ownerId", "tag", COUNT(*) FROM "Plant" WHERE "tag" IS NOT NULL GROUP BY "ownerId", "tag";

-- Once per statement: what it changed is netted per owner and tag (a re-tag is −1 for the old tag and +1 for the
-- new), then written in (owner, tag) order, so writers that touch the same counts lock them in the same order
-- and cannot deadlock on them. A count that would come out below 1 is deleted, so a lost row cannot stay behind.
CREATE FUNCTION "plant_tag_count"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants")
    SELECT "ownerId", "tag", COUNT(*) FROM new_rows WHERE "tag" IS NOT NULL GROUP BY "ownerId", "tag" ORDER BY "ownerId", "tag"
    ON CONFLICT ("ownerId", "tag") DO UPDATE SET "plants" = "PlantTagCount"."plants" + excluded."plants";
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' THEN
    INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants")
    SELECT "ownerId", "tag", -COUNT(*) FROM old_rows WHERE "tag" IS NOT NULL GROUP BY "ownerId", "tag" ORDER BY "ownerId", "tag"
    ON CONFLICT ("ownerId", "tag") DO UPDATE SET "plants" = "PlantTagCount"."plants" + excluded."plants";
  ELSE
    INSERT INTO "PlantTagCount" ("ownerId", "tag", "plants")
    SELECT "ownerId", "tag", SUM(delta) FROM (
      SELECT "ownerId", "tag", 1 AS delta FROM new_rows WHERE "tag" IS NOT NULL
      UNION ALL
      SELECT "ownerId", "tag", -1 FROM old_rows WHERE "tag" IS NOT NULL
    ) AS changed GROUP BY "ownerId", "tag" HAVING SUM(delta) <> 0 ORDER BY "ownerId", "tag"
    ON CONFLICT ("ownerId", "tag") DO UPDATE SET "plants" = "PlantTagCount"."plants" + excluded."plants";
  END IF;
  DELETE FROM "PlantTagCount" c USING (SELECT DISTINCT "ownerId", "tag" FROM old_rows WHERE "tag" IS NOT NULL) AS gone
  WHERE c."ownerId" = gone."ownerId" AND c."tag" = gone."tag" AND c."plants" <= 0;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Plant_created_tag_count" AFTER INSERT ON "Plant"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_tag_count"();

CREATE TRIGGER "Plant_deleted_tag_count" AFTER DELETE ON "Plant"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_tag_count"();

CREATE TRIGGER "Plant_updated_tag_count" AFTER UPDATE ON "Plant"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_tag_count"();
