-- CreateTable
CREATE TABLE "PlantListVersion" (
    "ownerId" INTEGER NOT NULL,
    "version" BIGINT NOT NULL,

    CONSTRAINT "PlantListVersion_pkey" PRIMARY KEY ("ownerId")
);

-- The REST list's versions (written by hand: Prisma's schema language has no triggers). Every committed change
-- a list could show (a plant created, deleted, renamed, re-tagged, its folded name filled in, or moved to
-- another owner) bumps its owner's row in the statement that makes it, whichever door, process or instance
-- made it; src/server/plants/versions.ts reads them. A change that changes nothing bumps nothing.
--
-- Once per statement, each owner once, in owner order: writers to one owner's plants queue on that owner's
-- row until they commit (so no bump is lost), and two statements that change several owners' plants (an
-- admin's bulk delete) lock the rows in the same order, so they cannot deadlock on them.
CREATE FUNCTION "plant_list_version"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT DISTINCT "ownerId", 1 FROM new_rows ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT DISTINCT "ownerId", 1 FROM old_rows ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  ELSE
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT owner, 1 FROM (
      -- A plant that leaves an owner changes that owner's list too.
      SELECT n."ownerId" AS owner FROM new_rows n JOIN old_rows o ON o."id" = n."id"
      WHERE o."name" IS DISTINCT FROM n."name" OR o."tag" IS DISTINCT FROM n."tag"
         OR o."nameFolded" IS DISTINCT FROM n."nameFolded" OR o."ownerId" IS DISTINCT FROM n."ownerId"
      UNION
      SELECT o."ownerId" FROM new_rows n JOIN old_rows o ON o."id" = n."id" WHERE o."ownerId" IS DISTINCT FROM n."ownerId"
    ) AS changed ORDER BY owner
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "Plant_created_list_version" AFTER INSERT ON "Plant"
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_list_version"();

CREATE TRIGGER "Plant_deleted_list_version" AFTER DELETE ON "Plant"
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_list_version"();

CREATE TRIGGER "Plant_updated_list_version" AFTER UPDATE ON "Plant"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_list_version"();
