import 'server-only';

import { db } from '@/server/db/client';

/** Delivered and failed deliveries are kept this long for the delivery log, then swept. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

const SWEEP_BATCH = 500;

/** Deletes delivered and failed deliveries older than the retention, a batch at a time. */
export async function sweepOldDeliveries(now = Date.now()): Promise<number> {
  const cutoff = BigInt(now - DELIVERY_RETENTION_MS);
  let deleted = 0;
  for (;;) {
    const rows = await db.webhookDelivery.findMany({
      where: { createdAtMs: { lt: cutoff }, status: { not: 'pending' } },
      orderBy: { createdAtMs: 'asc' },
      take: SWEEP_BATCH,
      select: { id: true },
    });
    if (rows.length === 0) return deleted;
    const { count } = await db.webhookDelivery.deleteMany({ where: { id: { in: rows.map((row) => row.id) }, status: { not: 'pending' } } });
    deleted += count;
    if (rows.length < SWEEP_BATCH) return deleted;
  }
}
