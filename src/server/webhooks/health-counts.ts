import 'server-only';

import { db } from '@/server/db/client';

export type WebhookCounts = { pending: number; failing: number; failed: number };

let countsCache: { at: number; counts: Promise<WebhookCounts> } | undefined;

/**
 * For /api/health: deliveries waiting, endpoints whose attempts are failing, deliveries given up. Kept
 * for a second, so a health check flood costs the database little.
 */
export function webhookCounts(now = Date.now()): Promise<WebhookCounts> {
  if (countsCache && now - countsCache.at < 1_000) return countsCache.counts;
  const counts = Promise.all([
    db.webhookDelivery.count({ where: { status: 'pending' } }),
    db.webhookEndpoint.count({ where: { failingSinceMs: { not: null } } }),
    db.webhookDelivery.count({ where: { status: 'failed' } }),
  ]).then(([pending, failing, failed]) => ({ pending, failing, failed }));
  countsCache = { at: now, counts };
  counts.catch(() => (countsCache = undefined));
  return counts;
}
