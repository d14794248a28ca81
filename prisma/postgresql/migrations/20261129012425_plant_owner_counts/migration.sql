-- CreateTable
CREATE TABLE "PlantOwnerCount" (
    "ownerId" INTEGER NOT NULL,
    "plants" INTEGER NOT NULL,

    CONSTRAINT "PlantOwnerCount_pkey" PRIMARY KEY ("ownerId")
);

-- CreateIndex
CREATE INDEX "PlantTagCount_tag_idx" ON "PlantTagCount"("tag");

-- Each owner's number of plants, kept by the database as PlantTagCount is (written by hand: Prisma's schema
-- language has no triggers): every plant created, deleted or moved to another owner changes its owner's count in
-- the statement that makes the change, whichever door, process, instance or tool made it. The admin page's exact
-- totals read these rows (plants/counts.ts). The plants already stored are counted first.
INSERT INTO "PlantOwnerCount" ("ownerId", "plants")
SELECT "ownerId", COUNT(*) FROM "Plant" GROUP BY "ownerId";

-- Once per statement: what it changed is netted per owner, then written in owner order, so writers that touch
-- the same counts lock them in the same order and cannot deadlock on them.
CREATE FUNCTION "plant_owner_count"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "PlantOwnerCount" ("ownerId", "plants")
    SELECT "ownerId", COUNT(*) FROM new_rows GROUP BY "ownerId" ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "plants" = "PlantOwnerCount"."plants" + excluded."plants";
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "PlantOwnerCount" ("ownerId", "plants")
    SELECT "ownerId", -COUNT(*) FROM old_rows GROUP BY "ownerId" ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "plants" = "PlantOwnerCount"."plants" + excluded."plants";
  ELSE
    INSERT INTO "PlantOwnerCount" ("ownerId", "plants")
    SELECT "ownerId", SUM(delta) FROM (
      SELECT "ownerId", 1 AS delta FROM new_rows
      UNION ALL
      SELECT "ownerId", -1 FROM old_rows
    ) AS changed GROUP BY "ownerId" HAVING SUM(delta) <> 0 ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "plants" = "PlantOwnerCount"."plants" + excluded."plants";
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Plant_created_owner_count" AFTER INSERT ON "Plant"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_owner_count"();

CREATE TRIGGER "Plant_deleted_owner_count" AFTER DELETE ON "Plant"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_owner_count"();

CREATE TRIGGER "Plant_updated_owner_count" AFTER UPDATE ON "Plant"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_owner_count"();

-- TRUNCATE fires no DELETE trigger: a tool that empties the table empties both counts with it.
CREATE FUNCTION "plant_counts_truncated"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM "PlantOwnerCount";
  DELETE FROM "PlantTagCount";
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Plant_truncated_counts" AFTER TRUNCATE ON "Plant" FOR EACH STATEMENT EXECUTE FUNCTION "plant_counts_truncated"();
