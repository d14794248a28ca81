-- A plant's id is part of what a list shows: a change of it (only SQL outside the app makes one; the API keeps
-- ids) bumps its owner's version like a rename, so no kept answer or 304 outlives it
-- (src/server/http/rest/kept-answers.ts). An update's old and new rows can no longer be paired by id, so the
-- changed rows are those of either side the other side lacks (as whole rows, NULLs equal): the old side's
-- owners lost or changed a plant, the new side's gained or changed one. Otherwise as before: once per
-- statement, each owner once, in owner order.
CREATE OR REPLACE FUNCTION "plant_list_version"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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
    SELECT DISTINCT owner, 1 FROM (
      (SELECT "id", "name", "tag", "nameFolded", "ownerId" AS owner FROM old_rows
       EXCEPT ALL SELECT "id", "name", "tag", "nameFolded", "ownerId" FROM new_rows)
      UNION ALL
      (SELECT "id", "name", "tag", "nameFolded", "ownerId" FROM new_rows
       EXCEPT ALL SELECT "id", "name", "tag", "nameFolded", "ownerId" FROM old_rows)
    ) AS changed ORDER BY owner
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  END IF;
  RETURN NULL;
END;
$$;
