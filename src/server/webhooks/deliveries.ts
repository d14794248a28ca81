import 'server-only';

import { db } from '@/server/db/client';
import { isForeignKeyViolation, isRecordMissing } from '@/server/db/error-codes';
import { AppError } from '@/shared/errors';
import { DELIVERY_BATCH_MAX } from '@/shared/limits';
import { DISCARDED_ERROR, type QueueBatch, type WebhookDelivery } from '@/shared/webhooks';

import { deliveryColumns, toDelivery } from './delivery-rows';
import { noEndpoint } from './endpoints';
import { deliveriesQueued, eventPayload, newEventId, TEST_EVENT_MESSAGE, TEST_EVENT_TYPE } from './outbox';

/** What an admin does with deliveries: a test event, the delivery log page by page, "retry now", retry all, discard. */

/** Sends a `webhook.test` event to this endpoint only, in its turn after what is already waiting for it. */
export async function sendTestEvent(id: number): Promise<WebhookDelivery> {
  const now = Date.now();
  try {
    const row = await db.webhookDelivery.create({
      data: {
        endpointId: id,
        eventId: newEventId(),
        type: TEST_EVENT_TYPE,
        payload: eventPayload(TEST_EVENT_TYPE, { endpointId: id, message: TEST_EVENT_MESSAGE }, new Date(now)),
        createdAtMs: BigInt(now),
        nextAttemptAtMs: BigInt(now),
      },
      select: deliveryColumns,
    });
    deliveriesQueued();
    return toDelivery(row);
  } catch (error) {
    // The endpoint does not exist (the foreign key refuses the row).
    if (isForeignKeyViolation(error)) throw noEndpoint(id);
    throw error;
  }
}

export type DeliveryPage = { deliveries: WebhookDelivery[]; nextBefore: number | null };

/** An endpoint's delivery log, newest first, paged by id. */
export async function listDeliveries(input: { id: number; limit: number; before?: number; status?: string }): Promise<DeliveryPage> {
  const rows = await db.webhookDelivery.findMany({
    where: { endpointId: input.id, ...(input.status ? { status: input.status } : {}), ...(input.before === undefined ? {} : { id: { lt: input.before } }) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
    select: deliveryColumns,
  });
  // A delivery row exists only for an existing endpoint (deleting one deletes its deliveries), so only an
  // empty page needs to ask whether the endpoint is there.
  if (rows.length === 0 && !(await db.webhookEndpoint.findUnique({ where: { id: input.id }, select: { id: true } }))) throw noEndpoint(input.id);
  const deliveries = rows.slice(0, input.limit).map(toDelivery);
  return { deliveries, nextBefore: rows.length > input.limit ? deliveries[deliveries.length - 1]!.id : null };
}

/**
 * "Retry now": the delivery is due at once. A failed one gets one more attempt (its 24 hours are over);
 * a delivered one is sent again. It still goes after older deliveries waiting for the same endpoint.
 */
export async function retryDelivery(id: number): Promise<WebhookDelivery> {
  let row;
  try {
    row = await db.webhookDelivery.update({ where: { id }, data: { status: 'pending', nextAttemptAtMs: BigInt(Date.now()) }, select: deliveryColumns });
  } catch (error) {
    if (isRecordMissing(error)) throw new AppError('webhookDeliveryNotFound', `no webhook delivery with id ${id}`, 'id');
    throw error;
  }
  deliveriesQueued();
  return toDelivery(row);
}

/**
 * One batch of a bulk action on an endpoint's queue: the oldest DELIVERY_BATCH_MAX deliveries in `state` after
 * `after`, changed in one statement (still in that state then: the sender may have delivered one meanwhile).
 * `charge` is told how many it found before anything is written (the call is charged its rows, as a bulk change
 * of plants is). A delivery being sent at that moment may still arrive: the sender read it before.
 */
async function queueBatch(
  endpointId: number,
  state: 'pending' | 'failed',
  after: number | undefined,
  charge: (rows: number) => Promise<void>,
  data: { status: 'pending' | 'failed'; nextAttemptAtMs?: bigint; lastError?: string },
): Promise<QueueBatch> {
  const found = await db.webhookDelivery.findMany({
    where: { endpointId, status: state, ...(after === undefined ? {} : { id: { gt: after } }) },
    orderBy: { id: 'asc' },
    take: DELIVERY_BATCH_MAX + 1,
    select: { id: true },
  });
  const ids = found.slice(0, DELIVERY_BATCH_MAX).map((row) => row.id);
  // Awaited: a refused charge rejects, and nothing may be written then (on PostgreSQL it may also wait for the
  // budget the instances share).
  await charge(ids.length);
  if (ids.length === 0) {
    if (!(await db.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { id: true } }))) throw noEndpoint(endpointId);
    return { done: 0, nextAfter: null };
  }
  const { count } = await db.webhookDelivery.updateMany({ where: { id: { in: ids }, status: state }, data });
  return { done: count, nextAfter: found.length > DELIVERY_BATCH_MAX ? ids[ids.length - 1]! : null };
}

/** Retry all: every delivery in `state` due at once, oldest first (a failed one waiting again, with one more attempt). */
export async function retryAll(endpointId: number, state: 'pending' | 'failed', after: number | undefined, charge: (rows: number) => Promise<void>): Promise<QueueBatch> {
  const batch = await queueBatch(endpointId, state, after, charge, { status: 'pending', nextAttemptAtMs: BigInt(Date.now()) });
  if (batch.done > 0) deliveriesQueued();
  return batch;
}

/** Discard: the waiting deliveries given up, marked failed and not sent (they can be retried from the log for 7 days). */
export function discardWaiting(endpointId: number, after: number | undefined, charge: (rows: number) => Promise<void>): Promise<QueueBatch> {
  return queueBatch(endpointId, 'pending', after, charge, { status: 'failed', lastError: DISCARDED_ERROR });
}
