-- AlterTable
ALTER TABLE "Plant" ADD COLUMN "tagFolded" TEXT;

-- CreateIndex
CREATE INDEX "Plant_tagFolded_id_idx" ON "Plant"("tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_tagFolded_id_idx" ON "Plant"("ownerId", "tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_tag_tagFolded_id_idx" ON "Plant"("tag", "tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_tag_tagFolded_id_idx" ON "Plant"("ownerId", "tag", "tagFolded", "id");

-- The tag sort's key: every tag folded as names are (shared/name-fold.ts), so "Tropical" and "tropical" sort
-- together and before "Zebra", alike on both engines; kept by the database whoever writes the row (the app, the
-- import, psql, sqlite3), as the folded name is (migration *_plant_name_fold_in_the_database). A write whose folded
-- tag is not its tag's fold is corrected in the statement that made it; the tags already stored are folded first.
UPDATE "Plant" SET "tagFolded" = CASE WHEN "tag" IS NULL THEN NULL ELSE CASE WHEN "tag" NOT GLOB '*[^ -~]*' THEN trim(replace(replace(replace(lower("tag"), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') ELSE trim(replace(replace(replace((SELECT group_concat(coalesce(f."folded", substr("tag", j.key + 1, 1)), '') FROM json_each('[' || substr(replace(hex(zeroblob(length("tag"))), '00', ',0'), 2) || ']') AS j LEFT JOIN "PlantNameFold" AS f ON f."character" = substr("tag", j.key + 1, 1)), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') END END;

CREATE TRIGGER "Plant_created_tag_fold" AFTER INSERT ON "Plant" WHEN NEW."tag" IS NOT NULL OR NEW."tagFolded" IS NOT NULL BEGIN
  UPDATE "Plant" SET "tagFolded" = CASE WHEN NEW."tag" IS NULL THEN NULL ELSE CASE WHEN NEW."tag" NOT GLOB '*[^ -~]*' THEN trim(replace(replace(replace(lower(NEW."tag"), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') ELSE trim(replace(replace(replace((SELECT group_concat(coalesce(f."folded", substr(NEW."tag", j.key + 1, 1)), '') FROM json_each('[' || substr(replace(hex(zeroblob(length(NEW."tag"))), '00', ',0'), 2) || ']') AS j LEFT JOIN "PlantNameFold" AS f ON f."character" = substr(NEW."tag", j.key + 1, 1)), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') END END
  WHERE "id" = NEW."id" AND "tagFolded" IS NOT (CASE WHEN NEW."tag" IS NULL THEN NULL ELSE CASE WHEN NEW."tag" NOT GLOB '*[^ -~]*' THEN trim(replace(replace(replace(lower(NEW."tag"), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') ELSE trim(replace(replace(replace((SELECT group_concat(coalesce(f."folded", substr(NEW."tag", j.key + 1, 1)), '') FROM json_each('[' || substr(replace(hex(zeroblob(length(NEW."tag"))), '00', ',0'), 2) || ']') AS j LEFT JOIN "PlantNameFold" AS f ON f."character" = substr(NEW."tag", j.key + 1, 1)), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') END END);
END;

CREATE TRIGGER "Plant_retagged_tag_fold" AFTER UPDATE OF "tag", "tagFolded" ON "Plant" BEGIN
  UPDATE "Plant" SET "tagFolded" = CASE WHEN NEW."tag" IS NULL THEN NULL ELSE CASE WHEN NEW."tag" NOT GLOB '*[^ -~]*' THEN trim(replace(replace(replace(lower(NEW."tag"), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') ELSE trim(replace(replace(replace((SELECT group_concat(coalesce(f."folded", substr(NEW."tag", j.key + 1, 1)), '') FROM json_each('[' || substr(replace(hex(zeroblob(length(NEW."tag"))), '00', ',0'), 2) || ']') AS j LEFT JOIN "PlantNameFold" AS f ON f."character" = substr(NEW."tag", j.key + 1, 1)), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') END END
  WHERE "id" = NEW."id" AND "tagFolded" IS NOT (CASE WHEN NEW."tag" IS NULL THEN NULL ELSE CASE WHEN NEW."tag" NOT GLOB '*[^ -~]*' THEN trim(replace(replace(replace(lower(NEW."tag"), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') ELSE trim(replace(replace(replace((SELECT group_concat(coalesce(f."folded", substr(NEW."tag", j.key + 1, 1)), '') FROM json_each('[' || substr(replace(hex(zeroblob(length(NEW."tag"))), '00', ',0'), 2) || ']') AS j LEFT JOIN "PlantNameFold" AS f ON f."character" = substr(NEW."tag", j.key + 1, 1)), ' ', ' ' || char(1)), char(1) || ' ', ''), char(1), ''), ' ') END END);
END;
