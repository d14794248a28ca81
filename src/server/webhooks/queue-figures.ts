import { db } from '@/server/db/client';

import type { WebhookQueueFigures } from '@/server/observability/metrics';

/** The webhook queue's figures for a scrape: four counts on indexed columns, on every instance together. */
export async function readWebhookQueue(now = Date.now()): Promise<WebhookQueueFigures> {
  const [pending, oldest, failingEndpoints, failedDeliveries] = await Promise.all([
    db.webhookDelivery.count({ where: { status: 'pending' } }),
    db.webhookDelivery.findFirst({ where: { status: 'pending' }, orderBy: { id: 'asc' }, select: { createdAtMs: true } }),
    db.webhookEndpoint.count({ where: { enabled: true, failingSinceMs: { not: null } } }),
    db.webhookDelivery.count({ where: { status: 'failed' } }),
  ]);
  return { pending, oldestPendingAgeSeconds: oldest ? Math.max(0, (now - Number(oldest.createdAtMs)) / 1000) : 0, failingEndpoints, failedDeliveries };
}
