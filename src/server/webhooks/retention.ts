import 'server-only';

import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { db } from '@/server/db/client';
import { DELIVERY_RETENTION_MS } from '@/shared/limits';


/** At most this many deliveries in one slice's delete (one parameter each). */
const SWEEP_SLICE_MAX = 1_024;
/** The backlog shown in /api/metrics is counted up to this: a scrape reads no more of the index than that. */
export const OLD_DELIVERIES_COUNTED_UP_TO = 10_000;

/**
 * The settled states, read one at a time by the index on (status, createdAtMs): a condition `status <> 'pending'`
 * walked the age index through every old delivery still pending (an endpoint disabled, or no
 * WEBHOOKS_SECRET_KEY, keeps them for as long as it takes), in every slice and every scrape (retention.test.ts).
 */
const SETTLED = ['delivered', 'failed'] as const;

const past = (status: (typeof SETTLED)[number], now: number) => ({ status, createdAtMs: { lt: BigInt(now - DELIVERY_RETENTION_MS) } });

/** Deletes at most `size` delivered and failed deliveries older than the retention, the oldest of each state first. */
export async function sweepOldDeliveries(size: number, now = Date.now()): Promise<SliceResult> {
  const ids: number[] = [];
  for (const status of SETTLED) {
    if (ids.length === size) break;
    const rows = await db.webhookDelivery.findMany({ where: past(status, now), orderBy: { createdAtMs: 'asc' }, take: size - ids.length, select: { id: true } });
    ids.push(...rows.map((row) => row.id));
  }
  if (ids.length === 0) return { done: 0, more: false };
  // Still not pending: a row is never sent again once settled, but the condition costs nothing to keep.
  const { count } = await db.webhookDelivery.deleteMany({ where: { id: { in: ids }, status: { not: 'pending' } } });
  return { done: count, more: ids.length === size };
}

/** Settled deliveries past the retention still in the table, counted up to OLD_DELIVERIES_COUNTED_UP_TO. */
export async function countOldDeliveries(now = Date.now()): Promise<number> {
  let counted = 0;
  for (const status of SETTLED) {
    if (counted === OLD_DELIVERIES_COUNTED_UP_TO) break;
    counted += await db.webhookDelivery.count({ where: past(status, now), take: OLD_DELIVERIES_COUNTED_UP_TO - counted });
  }
  return counted;
}

/**
 * Sweeps at the start and then every `everyMs` (10 minutes), in slices (background/slices.ts), whether or not
 * webhooks are being sent (the log's rows are there either way); each instance may run one.
 */
export function startDeliveryRetention(options: { everyMs?: number; onError: (error: unknown) => void }): BackgroundJob {
  return startBackgroundJob({
    name: 'webhook-retention',
    everyMs: options.everyMs ?? 10 * 60 * 1000,
    step: (size) => sweepOldDeliveries(size),
    sizes: { initial: 64, max: SWEEP_SLICE_MAX },
    backlog: () => countOldDeliveries(),
    onError: options.onError,
  });
}
