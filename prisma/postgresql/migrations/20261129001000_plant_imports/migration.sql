-- CreateTable
CREATE TABLE "PlantImport" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'receiving',
    "problem" TEXT,
    "columns" TEXT,
    "parts" INTEGER NOT NULL DEFAULT 0,
    "lastPartHash" TEXT,
    "tail" TEXT NOT NULL DEFAULT '',
    "nextLine" INTEGER NOT NULL DEFAULT 1,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    "rows" INTEGER NOT NULL DEFAULT 0,
    "toCreate" INTEGER NOT NULL DEFAULT 0,
    "toChange" INTEGER NOT NULL DEFAULT 0,
    "unchanged" INTEGER NOT NULL DEFAULT 0,
    "refused" INTEGER NOT NULL DEFAULT 0,
    "appliedThrough" INTEGER NOT NULL DEFAULT 0,
    "created" INTEGER NOT NULL DEFAULT 0,
    "changed" INTEGER NOT NULL DEFAULT 0,
    "leftAsIs" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "tokenId" INTEGER,
    "runner" TEXT,
    "runnerUntilMs" BIGINT,
    "createdAtMs" BIGINT NOT NULL,
    "updatedAtMs" BIGINT NOT NULL,

    CONSTRAINT "PlantImport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PlantImportRow" (
    "importId" INTEGER NOT NULL,
    "line" INTEGER NOT NULL,
    "plantId" BIGINT,
    "cells" TEXT NOT NULL,
    "plan" TEXT NOT NULL,
    "outcome" TEXT,
    "error" INTEGER,
    "message" TEXT,

    CONSTRAINT "PlantImportRow_pkey" PRIMARY KEY ("importId","line")
);

-- CreateIndex
CREATE INDEX "PlantImport_userId_id_idx" ON "PlantImport"("userId", "id");

-- CreateIndex
CREATE INDEX "PlantImport_updatedAtMs_idx" ON "PlantImport"("updatedAtMs");

-- CreateIndex
CREATE INDEX "PlantImportRow_importId_plantId_idx" ON "PlantImportRow"("importId", "plantId");

-- CreateIndex
CREATE INDEX "PlantImportRow_importId_plan_line_idx" ON "PlantImportRow"("importId", "plan", "line");

-- AddForeignKey
ALTER TABLE "PlantImport" ADD CONSTRAINT "PlantImport_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PlantImportRow" ADD CONSTRAINT "PlantImportRow_importId_fkey" FOREIGN KEY ("importId") REFERENCES "PlantImport"("id") ON DELETE CASCADE ON UPDATE CASCADE;
