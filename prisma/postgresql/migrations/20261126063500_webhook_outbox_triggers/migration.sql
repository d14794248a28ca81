-- The webhook outbox (written by hand: Prisma's schema language has no triggers). Each plant created or
-- deleted queues its event for every enabled endpoint subscribed to it, inside the statement that changed
-- the plant, so the change and its event commit together or not at all. With no endpoint this inserts
-- nothing, and the create stays one statement (one round trip). One event id per event, the same for every
-- endpoint; times in Unix ms and the payload's timestamp from one clock reading. The body is what
-- src/server/webhooks/outbox.ts writes for test events:
-- {"type":…,"timestamp":"…Z","data":{"id":…,"name":…[,"tag":…]}}, ids exact.

-- The function resolves the tables through the search_path it was created with (the migration's schema, also
-- under ?schema=), whatever the session that fires it has set.
CREATE FUNCTION "webhook_outbox"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
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

CREATE TRIGGER "Plant_webhook_outbox" AFTER INSERT OR DELETE ON "Plant" FOR EACH ROW EXECUTE FUNCTION "webhook_outbox"();
