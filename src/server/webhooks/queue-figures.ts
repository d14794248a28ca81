import { db } from '@/server/db/client';

import type { WebhookQueueFigures } from '@/server/observability/metrics';

/**
 * The most deliveries of a state a scrape counts: a count walks the status index row by row (80–150 ms at a
 * million rows, on SQLite on the event loop), so past this the gauge reads this figure, and an alert on it
 * fires all the same.
 */
export const QUEUE_COUNT_CAP = 100_000;

/** The webhook queue's figures for a scrape: four counts on indexed columns, on every instance together. */
export async function readWebhookQueue(now = Date.now(), cap = QUEUE_COUNT_CAP): Promise<WebhookQueueFigures> {
  const [pending, oldest, failingEndpoints, failedDeliveries] = await Promise.all([
    db.webhookDelivery.count({ where: { status: 'pending' }, take: cap }),
    db.webhookDelivery.findFirst({ where: { status: 'pending' }, orderBy: { id: 'asc' }, select: { createdAtMs: true } }),
    db.webhookEndpoint.count({ where: { enabled: true, failingSinceMs: { not: null } } }),
    db.webhookDelivery.count({ where: { status: 'failed' }, take: cap }),
  ]);
  return { pending, oldestPendingAgeSeconds: oldest ? Math.max(0, (now - Number(oldest.createdAtMs)) / 1000) : 0, failingEndpoints, failedDeliveries };
}
