-- The retention's sweep and its backlog read settled deliveries by age, one status at a time
-- (src/server/webhooks/retention.ts). By "createdAtMs" alone they walked every old delivery still pending (an
-- endpoint disabled, or no WEBHOOKS_SECRET_KEY, keeps them waiting), each slice and each scrape.
-- DropIndex
DROP INDEX "WebhookDelivery_createdAtMs_idx";

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_createdAtMs_idx" ON "WebhookDelivery"("status", "createdAtMs");
