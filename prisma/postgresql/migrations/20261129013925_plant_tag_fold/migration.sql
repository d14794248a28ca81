-- AlterTable
ALTER TABLE "Plant" ADD COLUMN     "tagFolded" TEXT;

-- CreateIndex
CREATE INDEX "Plant_tagFolded_id_idx" ON "Plant"("tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_tagFolded_id_idx" ON "Plant"("ownerId", "tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_tag_tagFolded_id_idx" ON "Plant"("tag", "tagFolded", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_tag_tagFolded_id_idx" ON "Plant"("ownerId", "tag", "tagFolded", "id");

-- The tag sort's key: every tag folded as names are ("plant_name_fold", shared/name-fold.ts), so "Tropical" and
-- "tropical" sort together and before "Zebra", alike on both engines; kept by the database whoever writes the row
-- (the app, the import, psql), as the folded name is (migration *_plant_name_fold_in_the_database): every row
-- written gets its tag's fold, whatever the statement gave. The tags already stored are folded first.
UPDATE "Plant" SET "tagFolded" = "plant_name_fold"("tag") WHERE "tag" IS NOT NULL;

CREATE FUNCTION "plant_tag_folded"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  NEW."tagFolded" := CASE WHEN NEW."tag" IS NULL THEN NULL ELSE "plant_name_fold"(NEW."tag") END;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "Plant_tag_folded" BEFORE INSERT OR UPDATE OF "tag", "tagFolded" ON "Plant" FOR EACH ROW EXECUTE FUNCTION "plant_tag_folded"();
