import { expect, it } from 'vitest';

import { db } from '@/server/db/client';

import { readWebhookQueue } from './queue-figures';

/** The scrape's counts stop at their cap, whatever the log holds, on SQLite (the unit tests' engine). */
it('counts waiting and failed deliveries up to the cap, not past it', async () => {
  await db.$executeRawUnsafe(
    `INSERT INTO "WebhookEndpoint" (id, url, secret, events, enabled, description, "createdAtMs") VALUES (9001, 'https://example.com/figures', 'x', ',plant.created,', false, '', 0)`,
  );
  for (const [status, count] of [
    ['pending', 30],
    ['failed', 12],
  ] as const) {
    await db.$executeRawUnsafe(`WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ${count - 1})
      INSERT INTO "WebhookDelivery" ("endpointId", "eventId", type, payload, status, "createdAtMs", "nextAttemptAtMs")
      SELECT 9001, '${status}-' || i, 'plant.created', '{}', '${status}', 1000 + i, 0 FROM s`);
  }
  expect(await readWebhookQueue(2000, 20)).toMatchObject({ pending: 20, failedDeliveries: 12, oldestPendingAgeSeconds: 1 });
  expect(await readWebhookQueue(2000)).toMatchObject({ pending: 30, failedDeliveries: 12 });
});
