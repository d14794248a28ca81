-- AlterTable
ALTER TABLE "Plant" ADD COLUMN "nameFolded" TEXT;

-- CreateIndex
CREATE INDEX "Plant_tag_id_idx" ON "Plant"("tag", "id");

-- CreateIndex
CREATE INDEX "Plant_ownerId_tag_id_idx" ON "Plant"("ownerId", "tag", "id");
