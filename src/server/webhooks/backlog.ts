import 'server-only';

import { db } from '@/server/db/client';
import type { WebhookDelivery } from '@/shared/webhooks';

import { deliveryColumns, toDelivery } from './delivery-rows';
import { noEndpoint } from './endpoints';

/** How many of the oldest waiting deliveries the backlog shows: the ones that hold the queue. */
export const BACKLOG_SHOWN = 5;

export type Backlog = {
  counts: { pending: number; delivered: number; failed: number };
  /** The oldest pending deliveries, oldest first: each endpoint gets its events in order, so these go next. */
  oldest: WebhookDelivery[];
  /** With `deliveryId`: how many pending deliveries to this endpoint are older than it (they go first). */
  ahead: number | null;
};

/**
 * An endpoint's queue at a glance, for the delivery log: how many deliveries are in each state, which ones
 * go next, and where a delivery stands in the line ("retry now" makes a delivery due, not first). Every
 * query walks the (endpointId, status, id) index.
 */
export async function endpointBacklog(id: number, deliveryId?: number): Promise<Backlog> {
  const [groups, oldest, ahead, endpoint] = await Promise.all([
    db.webhookDelivery.groupBy({ by: ['status'], where: { endpointId: id }, _count: { _all: true } }),
    db.webhookDelivery.findMany({ where: { endpointId: id, status: 'pending' }, orderBy: { id: 'asc' }, take: BACKLOG_SHOWN, select: deliveryColumns }),
    deliveryId === undefined ? Promise.resolve(null) : db.webhookDelivery.count({ where: { endpointId: id, status: 'pending', id: { lt: deliveryId } } }),
    db.webhookEndpoint.findUnique({ where: { id }, select: { id: true } }),
  ]);
  if (!endpoint) throw noEndpoint(id);
  const counts = { pending: 0, delivered: 0, failed: 0 };
  for (const group of groups) if (group.status in counts) counts[group.status as keyof typeof counts] = group._count._all;
  return { counts, oldest: oldest.map(toDelivery), ahead };
}
