import 'server-only';

import { db } from '@/server/db/client';
import type { Logger } from '@/server/log';
import { webhookDeliveries } from '@/server/observability/metrics';

import type { LeasedEndpoint, PendingDelivery } from './due-batch';
import { type AttemptResult, storedText } from './http-attempt';
import { disableAfterMs, retryDelayMs, retryWindowMs } from './retry-schedule';

/** A delivery that waits for a retry, and until when (Unix ms). */
export type RetryAt = { id: number; nextAttemptAtMs: bigint };

/**
 * Writes the attempts down in one transaction. Only the last can have failed; resolves to the delivery
 * that now waits for a retry (and when), or null.
 */
export async function recordAttempts(
  endpoint: LeasedEndpoint,
  attempted: [PendingDelivery, AttemptResult][],
  options: { retryBaseMs: number; log: Logger },
): Promise<RetryAt | null> {
  const { log } = options;
  if (attempted.length === 0) return null;
  const now = Date.now();
  const writes = attempted.map(([delivery, result]) => {
    const last = {
      attempts: delivery.attempts + 1,
      lastAttemptAtMs: BigInt(now),
      lastStatus: result.status,
      lastError: result.error === null ? null : storedText(result.error),
      lastResponse: result.response === null ? null : storedText(result.response),
    };
    return { delivery, result, last };
  });
  const [failed] = writes.filter(({ result }) => !result.ok);
  let retry: RetryAt | null = null;
  let giveUp = false;
  let disable = false;
  const endpointChange: { failingSinceMs?: bigint | null; enabled?: boolean; disabledReason?: string } = {};
  if (failed) {
    giveUp = now - Number(failed.delivery.createdAtMs) >= retryWindowMs(options.retryBaseMs);
    if (!giveUp) retry = { id: failed.delivery.id, nextAttemptAtMs: BigInt(now + retryDelayMs(failed.last.attempts, options.retryBaseMs)) };
    if (endpoint.failingSinceMs === null) endpointChange.failingSinceMs = BigInt(now);
    else if (now - Number(endpoint.failingSinceMs) >= disableAfterMs(options.retryBaseMs)) {
      disable = true;
      endpointChange.enabled = false;
      endpointChange.disabledReason = `disabled by the server: every attempt since ${new Date(Number(endpoint.failingSinceMs)).toISOString()} failed`;
    }
  } else if (endpoint.failingSinceMs !== null) {
    endpointChange.failingSinceMs = null;
  }
  // One statement for the deliveries answered alike (a receiver answers most the same: 204, no body),
  // their attempts counted up in place; the failed one by itself.
  const alike = new Map<string, { ids: number[]; last: Omit<(typeof writes)[number]['last'], 'attempts'> }>();
  for (const { delivery, result, last } of writes) {
    if (!result.ok) continue;
    const { attempts: _attempts, ...rest } = last;
    const key = JSON.stringify([rest.lastStatus, rest.lastResponse]);
    const group = alike.get(key) ?? alike.set(key, { ids: [], last: rest }).get(key)!;
    group.ids.push(delivery.id);
  }
  await db.$transaction([
    ...[...alike.values()].map(({ ids, last }) =>
      db.webhookDelivery.updateMany({
        where: { id: { in: ids } },
        data: { ...last, attempts: { increment: 1 }, status: 'delivered', deliveredAtMs: BigInt(now) },
      }),
    ),
    ...(failed
      ? [
          db.webhookDelivery.updateMany({
            where: { id: failed.delivery.id },
            data: { ...failed.last, ...(giveUp ? { status: 'failed' } : { nextAttemptAtMs: retry!.nextAttemptAtMs }) },
          }),
        ]
      : []),
    ...(Object.keys(endpointChange).length > 0 ? [db.webhookEndpoint.updateMany({ where: { id: endpoint.id }, data: endpointChange })] : []),
  ]);
  for (const { result } of writes) webhookDeliveries.labels(result.ok ? 'delivered' : giveUp ? 'failed' : 'retrying').inc();
  if (endpointChange.failingSinceMs !== undefined) endpoint.failingSinceMs = endpointChange.failingSinceMs;
  if (failed) {
    const { delivery, result, last } = failed;
    log.warn(
      {
        endpointId: endpoint.id,
        deliveryId: delivery.id,
        type: delivery.type,
        attempt: last.attempts,
        status: result.status,
        error: result.error,
        ...(giveUp ? { gaveUp: true } : { retryInMs: Number(retry!.nextAttemptAtMs) - now }),
      },
      'webhook delivery failed',
    );
  }
  if (disable) {
    endpoint.enabled = false;
    log.warn({ endpointId: endpoint.id, failingSince: new Date(Number(endpoint.failingSinceMs)).toISOString() }, 'webhook endpoint disabled: failing for too long');
  }
  return retry;
}

/**
 * The oldest waiting delivery is not due yet: the newer ones wait with it, so they are not picked up
 * before it (order per endpoint); the worker wakes when it is due.
 */
export async function holdBackNewer(endpointId: number, head: RetryAt): Promise<void> {
  await db.webhookDelivery.updateMany({
    where: { endpointId, status: 'pending', id: { gt: head.id }, nextAttemptAtMs: { lt: head.nextAttemptAtMs } },
    data: { nextAttemptAtMs: head.nextAttemptAtMs },
  });
}
