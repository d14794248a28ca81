-- CreateTable
CREATE TABLE "PlantChange" (
    "seq" SERIAL NOT NULL,
    "plantId" BIGINT NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "tag" TEXT,
    "atMs" BIGINT NOT NULL,

    CONSTRAINT "PlantChange_pkey" PRIMARY KEY ("seq")
);

-- CreateTable
CREATE TABLE "PlantTombstone" (
    "id" BIGINT NOT NULL,
    "name" TEXT NOT NULL,
    "tag" TEXT,
    "ownerId" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "deletedById" INTEGER NOT NULL,
    "deletedAtMs" BIGINT NOT NULL,

    CONSTRAINT "PlantTombstone_pkey" PRIMARY KEY ("id")
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
-- instance made it: the admin page's live feed (src/server/plants/live/) reads it on every instance. A
-- rename or re-tag that changes nothing leaves nothing; folding names (nameFolded) is not a change.
CREATE FUNCTION "plant_change_log"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
    VALUES (OLD."id", OLD."ownerId", 'deleted', NULL, NULL, floor(extract(epoch FROM clock_timestamp()) * 1000));
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
    VALUES (NEW."id", NEW."ownerId", 'created', NEW."name", NEW."tag", floor(extract(epoch FROM clock_timestamp()) * 1000));
  ELSIF OLD."name" IS DISTINCT FROM NEW."name" OR OLD."tag" IS DISTINCT FROM NEW."tag" THEN
    INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
    VALUES (NEW."id", NEW."ownerId", 'updated', NEW."name", NEW."tag", floor(extract(epoch FROM clock_timestamp()) * 1000));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Plant_change_log" AFTER INSERT OR DELETE OR UPDATE OF "name", "tag" ON "Plant" FOR EACH ROW EXECUTE FUNCTION "plant_change_log"();
