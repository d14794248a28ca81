/**
 * The queue's bulk actions of the admin page (tRPC only): retry all and discard, 500 deliveries a call, oldest
 * first, going on from `nextAfter`; each call charged its rows against the token's bucket, as a bulk change of
 * plants is (one unit per BULK_ROWS_PER_UNIT). Runs on both engines.
 */
import { describe, expect, it } from 'vitest';

import { BULK_ROWS_PER_UNIT } from '@/shared/limits';
import { DELIVERY_BATCH_MAX } from '@/shared/limits';
import { DISCARDED_ERROR, type QueueBatch } from '@/shared/webhooks';

import { expectStatus, setupServer } from '@test-support/api-fixture';
import { trpcCall, trpcData } from '@test-support/trpc-client';
import { registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';

/**
 * The token's burst, refilled too slowly to matter here: two actions over the queue's 501 test events fit in it (a batch of 500 costs 500 / BULK_ROWS_PER_UNIT units), but not a third.
 */
const BURST = 600;
const server = setupServer({ env: webhookEnv({ RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` }) });
const WAITING = DELIVERY_BATCH_MAX + 1;

describe('retry all and discard of an endpoint’s queue', () => {
  it(`go through ${WAITING} waiting deliveries 500 a call, oldest first, each call charged its rows`, async () => {
    // A disabled endpoint: its test events wait, unsent, which is all this needs.
    const admin = server.rawClient(server.adminToken);
    const { id } = await registerEndpoint(admin, 'http://127.0.0.1:8099/never');
    expectStatus(await admin.request('PATCH', `/api/webhooks/endpoints/${id}`, { body: '{"enabled":false}', contentType: 'application/json' }), 200);
    // The test events from tokens of their own, a burst's worth each: a test event costs several units.
    let filler = server.rawClient(server.adminToken);
    for (let sent = 0; sent < WAITING; sent += 50) {
      if (sent % 150 === 0) filler = server.rawClient((await server.createToken(`queue-filler-${sent}`, 'admin')).token);
      const answers = await Promise.all(Array.from({ length: Math.min(50, WAITING - sent) }, () => filler.post(`/api/webhooks/endpoints/${id}/test`, '{}')));
      for (const answer of answers) expectStatus(answer, 200);
    }
    const states = async (status: string) => (await admin.get(`/api/webhooks/endpoints/${id}/deliveries?status=${status}&limit=100`)).json as { id: bigint; lastError: string | null }[];

    const token = (await server.createToken('queue-worker', 'admin')).token;
    /** One action over the whole queue, call after call from `nextAfter`, as the page runs it: the calls' answers. */
    const all = async (procedure: string, input: object) => {
      const batches: QueueBatch[] = [];
      let after: number | null = null;
      do {
        const answer = await trpcCall(server.baseUrl, 'mutation', procedure, { token, input: { id, ...input, ...(after === null ? {} : { after }) } });
        expect(answer.status, answer.text).toBe(200);
        batches.push(trpcData<QueueBatch>(answer));
        after = batches.at(-1)!.nextAfter;
      } while (after !== null);
      return batches;
    };

    const retried = await all('webhooks.retryAll', { state: 'pending' });
    expect(retried.map((batch) => batch.done)).toEqual([DELIVERY_BATCH_MAX, 1]);
    const discarded = await all('webhooks.discardWaiting', {});
    expect(discarded.map((batch) => batch.done)).toEqual([DELIVERY_BATCH_MAX, 1]);
    expect(await states('pending')).toEqual([]);
    const failed = await states('failed');
    expect(failed).toHaveLength(100);
    for (const delivery of failed) expect(delivery.lastError).toBe(DISCARDED_ERROR);

    // What is left of the burst does not pay for another 500 rows: the calls were charged their rows, not one each.
    const refused = await trpcCall(server.baseUrl, 'mutation', 'webhooks.retryAll', { token, input: { id, state: 'failed' } });
    expect(refused.status).toBe(429);
    expect(await states('pending')).toEqual([]);
    expect(2 * Math.ceil(DELIVERY_BATCH_MAX / BULK_ROWS_PER_UNIT) + Math.ceil(DELIVERY_BATCH_MAX / BULK_ROWS_PER_UNIT)).toBeGreaterThan(BURST);
  });
});
