-- The webhook outbox (written by hand: Prisma's schema language has no triggers). Each plant created or
-- deleted queues its event for every enabled endpoint subscribed to it, inside the statement that changed
-- the plant, so the change and its event commit together or not at all. With no endpoint this inserts
-- nothing, and the create stays one statement. One event id per event (the scalar subquery runs once),
-- the same for every endpoint; times in Unix ms and the payload's timestamp from one clock reading.
-- The body is what src/server/webhooks/outbox.ts writes for test events:
-- {"type":…,"timestamp":"…Z","data":{"id":…,"name":…[,"tag":…]}}, ids exact.

CREATE TRIGGER "Plant_created_webhook_outbox" AFTER INSERT ON "Plant" BEGIN
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id",
    (SELECT 'msg_' || lower(hex(randomblob(16)))),
    'plant.created',
    json_object('type', 'plant.created', 'timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'data',
      CASE WHEN NEW."tag" IS NULL THEN json_object('id', NEW."id", 'name', NEW."name")
           ELSE json_object('id', NEW."id", 'name', NEW."name", 'tag', NEW."tag") END),
    CAST(unixepoch('subsec') * 1000 AS INTEGER),
    CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.created,%';
END;

CREATE TRIGGER "Plant_deleted_webhook_outbox" AFTER DELETE ON "Plant" BEGIN
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id",
    (SELECT 'msg_' || lower(hex(randomblob(16)))),
    'plant.deleted',
    json_object('type', 'plant.deleted', 'timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'data',
      CASE WHEN OLD."tag" IS NULL THEN json_object('id', OLD."id", 'name', OLD."name")
           ELSE json_object('id', OLD."id", 'name', OLD."name", 'tag', OLD."tag") END),
    CAST(unixepoch('subsec') * 1000 AS INTEGER),
    CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.deleted,%';
END;
