-- The triggers the declared plant fields decide
-- (src/tooling/plant-field-triggers.ts, from plantFields in src/shared/plants.ts): they replace what earlier
-- migrations wrote, so that each writes or compares every declared field.

-- The webhook outbox triggers, rewritten for the declared plant fields (src/tooling/plant-event-sql.ts).
DROP TRIGGER IF EXISTS "Plant_created_webhook_outbox";
CREATE TRIGGER "Plant_created_webhook_outbox" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id",
    (SELECT 'msg_' || lower(hex(randomblob(16)))),
    'plant.created',
    json_object('type', 'plant.created', 'timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'data',
      json_remove(json_object('id', NEW."id", 'name', NEW."name", 'tag', NEW."tag"),
        CASE WHEN NEW."tag" IS NULL THEN '$.tag' ELSE '$."(present)"' END)),
    CAST(unixepoch('subsec') * 1000 AS INTEGER),
    CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.created,%';
END;

DROP TRIGGER IF EXISTS "Plant_deleted_webhook_outbox";
CREATE TRIGGER "Plant_deleted_webhook_outbox" AFTER DELETE ON "Plant" BEGIN
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id",
    (SELECT 'msg_' || lower(hex(randomblob(16)))),
    'plant.deleted',
    json_object('type', 'plant.deleted', 'timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'data',
      json_remove(json_object('id', OLD."id", 'name', OLD."name", 'tag', OLD."tag"),
        CASE WHEN OLD."tag" IS NULL THEN '$.tag' ELSE '$."(present)"' END)),
    CAST(unixepoch('subsec') * 1000 AS INTEGER),
    CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.deleted,%';
END;

-- The live feed's log: every committed change of a plant leaves one row in "PlantChange", written by the database in
-- the statement that changes the plant, whichever door or process made it; the admin page's live feed
-- (src/server/plants/live/) reads it on every instance. The row holds the declared fields as the change left them,
-- none for a delete. An update that changes none of them leaves nothing; folding names (nameFolded) is not a change.
DROP TRIGGER IF EXISTS "Plant_created_change_log";
CREATE TRIGGER "Plant_created_change_log" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (NEW."id", NEW."ownerId", 'created', NEW."name", NEW."tag", CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;

DROP TRIGGER IF EXISTS "Plant_updated_change_log";
CREATE TRIGGER "Plant_updated_change_log" AFTER UPDATE OF "name", "tag" ON "Plant"
WHEN OLD."name" IS NOT NEW."name" OR OLD."tag" IS NOT NEW."tag" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (NEW."id", NEW."ownerId", 'updated', NEW."name", NEW."tag", CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;

DROP TRIGGER IF EXISTS "Plant_deleted_change_log";
CREATE TRIGGER "Plant_deleted_change_log" AFTER DELETE ON "Plant" BEGIN
  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", "name", "tag", "atMs")
  VALUES (OLD."id", OLD."ownerId", 'deleted', NULL, NULL, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;

-- The REST list's versions: every committed change a list could show (a plant created, deleted, moved to another
-- owner, or a change of its id, of a declared field or of its folded name) bumps its owner's row of
-- "PlantListVersion" in the statement that makes it, whichever door, process or instance made it;
-- src/server/plants/versions.ts reads them. A change that changes nothing bumps nothing.
DROP TRIGGER IF EXISTS "Plant_updated_list_version";
CREATE TRIGGER "Plant_updated_list_version" AFTER UPDATE OF "id", "name", "tag", "nameFolded", "ownerId" ON "Plant"
WHEN OLD."id" IS NOT NEW."id" OR OLD."name" IS NOT NEW."name" OR OLD."tag" IS NOT NEW."tag" OR OLD."nameFolded" IS NOT NEW."nameFolded" OR OLD."ownerId" IS NOT NEW."ownerId" BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;

-- End of the triggers the declared plant fields decide.
