import { describe, expect, it } from 'vitest';

import { SLICE_BUDGET_MS } from '@/server/background/slices';
import { db } from '@/server/db/client';

import { DELIVERY_RETENTION_MS } from '@/shared/limits';

import { countOldDeliveries, sweepOldDeliveries } from './retention';

/**
 * The delivery log's retention on SQLite (the unit tests' engine): what a slice deletes, and what a slice and the
 * backlog /api/metrics reads cost when the log holds old deliveries that must stay (pending ones: an endpoint
 * disabled, or a server without WEBHOOKS_SECRET_KEY, keeps them waiting for as long as it takes).
 */
const NOW = Date.now();
const OLD = NOW - DELIVERY_RETENTION_MS - 86_400_000;
let nextEndpoint = 1;

/** `count` deliveries of a new endpoint, created from `createdAtMs` on, a millisecond apart, in one statement. */
async function deliveries(count: number, status: string, createdAtMs: number): Promise<number> {
  const endpoint = nextEndpoint++;
  await db.$executeRawUnsafe(
    `INSERT INTO "WebhookEndpoint" (id, url, secret, events, enabled, description, "createdAtMs") VALUES (${endpoint}, 'https://example.com/${endpoint}', 'x', ',plant.created,', false, '', 0)`,
  );
  await db.$executeRawUnsafe(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${count - 1})
    INSERT INTO "WebhookDelivery" ("endpointId", "eventId", type, payload, status, "createdAtMs", "nextAttemptAtMs")
    SELECT ${endpoint}, 'event-' || i, 'plant.created', '{}', '${status}', ${createdAtMs} + i, 0 FROM s`);
  return endpoint;
}

/** The process's CPU time `work` took, in ms: better-sqlite3 runs each statement on this thread. */
async function cpuMs(work: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

describe('the delivery log’s retention', () => {
  it('deletes delivered and failed deliveries past the retention, oldest first, and keeps pending and recent ones', async () => {
    const delivered = await deliveries(3, 'delivered', OLD);
    const failed = await deliveries(2, 'failed', OLD + 10);
    const waiting = await deliveries(2, 'pending', OLD);
    const recent = await deliveries(2, 'delivered', NOW - 1_000);
    expect(await countOldDeliveries(NOW)).toBe(5);
    expect(await sweepOldDeliveries(4, NOW)).toEqual({ done: 4, more: true });
    expect(await sweepOldDeliveries(4, NOW)).toEqual({ done: 1, more: false });
    expect(await countOldDeliveries(NOW)).toBe(0);
    const left = await db.webhookDelivery.groupBy({ by: ['endpointId'], _count: true, where: { endpointId: { in: [delivered, failed, waiting, recent] } } });
    expect(Object.fromEntries(left.map((row) => [row.endpointId, row._count]))).toEqual({ [waiting]: 2, [recent]: 2 });
    await db.webhookDelivery.deleteMany({});
  });

  it('reads a slice’s rows and a capped backlog, not every old delivery that must stay', async () => {
    // 200,000 old deliveries still waiting, behind one old enough to go: a slice and a scrape each read a few
    // entries of an index, not the 200,000 (which an index on the age alone made them walk, each time).
    await deliveries(200_000, 'pending', OLD);
    await deliveries(1, 'delivered', OLD + 300_000);
    const costs = { count: await cpuMs(() => countOldDeliveries(NOW)), slice: await cpuMs(() => sweepOldDeliveries(1, NOW)) };
    expect(costs.count, 'the backlog count').toBeLessThan(SLICE_BUDGET_MS / 2);
    expect(costs.slice, 'a slice of one').toBeLessThan(SLICE_BUDGET_MS / 2);
    expect(await countOldDeliveries(NOW)).toBe(0);
  });
});
