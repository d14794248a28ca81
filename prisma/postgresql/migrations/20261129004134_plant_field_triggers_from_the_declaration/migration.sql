-- The triggers the declared plant fields decide
-- (src/tooling/plant-field-triggers.ts, from plantFields in src/shared/plants.ts): they replace what earlier
-- migrations wrote, so that each writes or compares every declared field.

-- The webhook outbox triggers, rewritten for the declared plant fields (src/tooling/plant-event-sql.ts).
CREATE OR REPLACE FUNCTION "webhook_outbox"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  plant RECORD;
  event_type TEXT;
  now_ms BIGINT;
  body TEXT;
  event_id TEXT := 'msg_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
  IF TG_OP = 'INSERT' THEN
    plant := NEW;
    event_type := 'plant.created';
  ELSE
    plant := OLD;
    event_type := 'plant.deleted';
  END IF;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
  body := '{"type":' || to_json(event_type)::text
    || ',"timestamp":' || to_json(to_char(to_timestamp(now_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    || ',"data":{"id":' || plant."id"::text
    || ',"name":' || to_json(plant."name")::text
    || CASE WHEN plant."tag" IS NULL THEN '' ELSE ',"tag":' || to_json(plant."tag")::text END
    || '}}';
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id", event_id, event_type, body, now_ms, now_ms
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,' || event_type || ',%';
  RETURN NULL;
END;
$$;

-- The live feed's log: every committed change of a plant leaves one row in "PlantChange", written by the database in
-- the statement that changes the plant, whichever door or process made it; the admin page's live feed
-- (src/server/plants/live/) reads it on every instance. The row holds the declared fields as the change left them,
-- none for a delete. An update that changes none of them leaves nothing; folding names (nameFolded) is not a change.
CREATE OR REPLACE FUNCTION "plant_change_log"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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

DROP TRIGGER IF EXISTS "Plant_change_log" ON "Plant";
CREATE TRIGGER "Plant_change_log" AFTER INSERT OR DELETE OR UPDATE OF "name", "tag" ON "Plant" FOR EACH ROW EXECUTE FUNCTION "plant_change_log"();

-- The REST list's versions: every committed change a list could show (a plant created, deleted, moved to another
-- owner, or a change of its id, of a declared field or of its folded name) bumps its owner's row of
-- "PlantListVersion" in the statement that makes it, whichever door, process or instance made it;
-- src/server/plants/versions.ts reads them. A change that changes nothing bumps nothing.
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

-- End of the triggers the declared plant fields decide.
