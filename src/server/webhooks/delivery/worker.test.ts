/**
 * The delivery worker against real receivers (HTTP servers on loopback) and the real test database.
 * The retry schedule is shrunk (WEBHOOKS_RETRY_BASE_MS = 100) so a backoff takes milliseconds.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';

import { db } from '@/server/db/client';
import { kib, WEBHOOK_RESPONSE_MAX_BYTES } from '@/shared/limits';
import { RETRY_BASE_MS, until, webhookWorkerTests } from '@test-support/webhook-worker';

import { newEventId, TEST_EVENT_TYPE } from '../outbox';
import { disableAfterMs, retryWindowMs } from './retry-schedule';
import type { Lookup } from '../ssrf';

const { logged, admin, worker, receiver, endpoint, deliveries } = webhookWorkerTests('worker-admin');
const BASE_MS = RETRY_BASE_MS;

let nextId = 10_000n;
const createPlants = async (count: number, name = 'p') => {
  const ids: bigint[] = [];
  for (let index = 0; index < count; index++) {
    const id = nextId++;
    await admin().caller.plants.create({ id, name: `${name} ${id}` });
    ids.push(id);
  }
  return ids;
};
const idOf = (body: string) => /"id":(-?\d+)/.exec(body)![1];

describe('the delivery worker', () => {
  it('delivers every event with Standard Webhooks headers that the standardwebhooks package verifies', async () => {
    const hook = await receiver();
    const { id, secret } = await endpoint(hook.url);
    worker();
    const ids = await createPlants(3, 'Signed');
    await admin().caller.plants.delete({ id: ids[0]! });
    const got = await hook.waitFor(4);
    const verifier = new Webhook(secret);
    const stored = await until(() => deliveries(id), (rows) => rows.every((row) => row.status === 'delivered'));
    got.forEach((request, index) => {
      expect(verifier.verify(request.body, request.headers as Record<string, string>)).toMatchObject({ type: index < 3 ? 'plant.created' : 'plant.deleted' });
      expect(request.headers['webhook-id']).toBe(stored[index]!.eventId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).toBe(stored[index]!.payload);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    });
    expect(got.map((request) => idOf(request.body))).toEqual([...ids, ids[0]].map(String));
    expect(stored.map((row) => [row.attempts, row.lastStatus, row.lastError])).toEqual(Array(4).fill([1, 204, null]));
    // Nothing secret or private in the log: no signing secret, no payload, no URL.
    const text = JSON.stringify(logged);
    for (const forbidden of [secret, secret.slice(6, 26), 'Signed', hook.url, '/hook']) expect(text).not.toContain(forbidden);
  });

  it('retries a receiver answering 500 on the exponential schedule, holding newer events back until it succeeds', async () => {
    const hook = await receiver();
    hook.answer((_, index) => (index < 4 ? { status: 500, body: 'not now' } : { status: 200 }));
    const { id } = await endpoint(hook.url);
    worker();
    const [first, second] = await createPlants(2, 'Retried');
    const got = await hook.waitFor(6, 20_000);
    // Four failures of the first event, then it, then the second: nothing overtook it.
    expect(got.map((request) => idOf(request.body))).toEqual([first, first, first, first, first, second].map(String));
    const gaps = got.slice(1, 5).map((request, index) => request.at - got[index]!.at);
    const expected = [BASE_MS, 2 * BASE_MS, 4 * BASE_MS, 8 * BASE_MS];
    gaps.forEach((gap, index) => {
      expect(gap, `wait ${index + 1}: ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(expected[index]! * 0.8 - 5);
      // The upper bound leaves room for a busy machine (each attempt also writes to the database).
      expect(gap, `wait ${index + 1}: ${gaps.join(', ')} ms`).toBeLessThan(expected[index]! * 1.2 + 1_000);
    });
    const rows = await until(() => deliveries(id), (all) => all.every((row) => row.status === 'delivered'));
    expect(rows.map((row) => row.attempts)).toEqual([5, 1]);
    expect((await db.webhookEndpoint.findUniqueOrThrow({ where: { id } })).failingSinceMs).toBeNull();
    console.log(`[worker] waits after 500s: ${gaps.join(', ')} ms (base ${BASE_MS} ms, ×2 each, ±20 %)`);
  });

  it('sends to one endpoint one request at a time, in order, with two workers sharing the database: each event once', async () => {
    const [one, two] = [await receiver(), await receiver()];
    // A slow receiver makes overlapping sends visible if there were any.
    one.answer(() => ({ status: 200 }));
    const endpoints = [await endpoint(one.url), await endpoint(two.url)];
    worker();
    worker();
    const ids = await createPlants(40, 'Shared');
    await Promise.all([one.waitFor(40), two.waitFor(40)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const hook of [one, two]) {
      expect(hook.received.map((request) => idOf(request.body))).toEqual(ids.map(String));
      expect(new Set(hook.received.map((request) => request.headers['webhook-id'])).size).toBe(40);
      expect(hook.maxConcurrent()).toBe(1);
    }
    for (const { id } of endpoints) expect((await deliveries(id)).every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);
  });

  it(`does not follow redirects, and keeps at most ${kib(WEBHOOK_RESPONSE_MAX_BYTES)} of an answer`, async () => {
    const [hook, internal] = [await receiver(), await receiver()];
    hook.answer((_, index) =>
      index === 0 ? { status: 302, headers: { Location: internal.url } } : index === 1 ? { status: 500, body: 'x'.repeat(1024 * 1024) } : { status: 200, body: 'y'.repeat(64 * 1024) },
    );
    const { id } = await endpoint(hook.url);
    worker();
    await createPlants(1, 'Redirected');
    await hook.waitFor(3);
    const [row] = await until(() => deliveries(id), (rows) => rows[0]?.status === 'delivered');
    expect(internal.received).toEqual([]);
    expect(row).toMatchObject({ attempts: 3, lastStatus: 200 });
    expect(row!.lastResponse!.length).toBeLessThanOrEqual(WEBHOOK_RESPONSE_MAX_BYTES);
    expect(row!.lastResponse).toMatch(/^y+$/);
    const failures = logged.filter((line) => line.message === 'webhook delivery failed').map((line) => line.entry.error);
    expect(failures.slice(-2)).toEqual(['answered 302: redirects are not followed', 'answered 500']);
  });

  it('gives up on an answer that does not come within the timeout', async () => {
    const hook = await receiver();
    hook.answer((_, index) => (index === 0 ? { hang: true } : { status: 200 }));
    const { id } = await endpoint(hook.url);
    worker({ timeoutMs: 300 });
    await createPlants(1, 'Slow');
    await hook.waitFor(2);
    const [row] = await until(() => deliveries(id), (rows) => rows[0]?.status === 'delivered');
    expect(row!.attempts).toBe(2);
    expect(logged.map((line) => line.entry.error)).toContain('no answer within 0.3 s');
  });

  it('checks the address again before each attempt: a name now resolving to a private address is not contacted', async () => {
    const hook = await receiver();
    let answer = '127.0.0.1';
    const lookup: Lookup = async () => [{ address: answer, family: 4 }];
    const { id } = await endpoint(`http://rebind.test:${hook.port}/hook`);
    const first = worker({ lookup, policy: { allowHttp: true, allowPrivate: true } });
    await createPlants(1, 'Rebound');
    await hook.waitFor(1);
    await until(() => deliveries(id), (rows) => rows[0]?.status === 'delivered');
    await first.stop();

    // The same name, now answered with an internal address: refused before any connection is made.
    answer = '10.0.0.5';
    worker({ lookup, policy: { allowHttp: false, allowPrivate: false } });
    const https = await endpoint('https://rebind.test/hook');
    await createPlants(1, 'Rebound');
    const [row] = await until(() => deliveries(https.id), (rows) => (rows[0]?.attempts ?? 0) >= 1);
    expect(row).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'refused before sending: rebind.test (10.0.0.5) is a private address; webhooks go to public addresses only (WEBHOOKS_ALLOW_PRIVATE=1 allows private, loopback and link-local ones)' });
    expect(hook.received).toHaveLength(1);
  });

  it('marks a delivery failed after its retry window, and disables an endpoint failing for five days (scaled)', async () => {
    const hook = await receiver();
    hook.answer(() => ({ status: 503 }));
    const { id } = await endpoint(hook.url);
    await createPlants(1, 'Old');
    const now = Date.now();
    await db.webhookDelivery.updateMany({ where: { endpointId: id }, data: { createdAtMs: BigInt(now - retryWindowMs(BASE_MS)) } });
    await db.webhookEndpoint.update({ where: { id }, data: { failingSinceMs: BigInt(now - disableAfterMs(BASE_MS)) } });
    worker();
    const [row] = await until(() => deliveries(id), (rows) => rows[0]?.status === 'failed');
    expect(row).toMatchObject({ attempts: 1, lastStatus: 503 });
    const disabled = await db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toMatch(/^disabled by the server: every attempt since \d{4}-.* failed$/);
    // A disabled endpoint gets no new events.
    await createPlants(1, 'Ignored');
    expect(await deliveries(id)).toHaveLength(1);
  });

  it('lets an attempt in flight finish on stop, and gives the lease back', async () => {
    const hook = await receiver();
    hook.answer(() => ({ hang: true }));
    const { id } = await endpoint(hook.url);
    const running = worker();
    await createPlants(1, 'Draining');
    await hook.waitFor(1);
    // Answer the request now in flight a little later: stop() must wait for it.
    setTimeout(() => hook.close(), 200);
    const startedStop = Date.now();
    await running.stop();
    expect(Date.now() - startedStop).toBeGreaterThanOrEqual(150);
    const endpointRow = await db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(endpointRow.leaseOwner).toBeNull();
    const [row] = await deliveries(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
  });
});

describe('one endpoint cannot hold up another, and every failure backs off', () => {
  it('delivers a healthy endpoint’s event while twelve endpoints hang, at a concurrency of 8 (it waited for their timeout)', async () => {
    const [hanging, healthy] = [await receiver(), await receiver()];
    hanging.answer(() => ({ hang: true }));
    // Created first, so they come first in line.
    for (let index = 0; index < 12; index++) await endpoint(`${hanging.url}/${index}`);
    const { id } = await endpoint(healthy.url);
    worker({ concurrency: 8, timeoutMs: 10_000 });
    await createPlants(1, 'Fair');
    await healthy.waitFor(1, 8_000);
    // No hanging request had ended when the healthy endpoint got its event: none had to time out first.
    expect(hanging.openNow()).toBe(hanging.received.length);
    await until(async () => hanging.openNow(), (open) => open === 12);
    await until(() => deliveries(id), (rows) => rows[0]?.status === 'delivered');
    // Let the hanging attempts end now rather than at their timeout.
    await hanging.close();
  });

  it('backs off on its own schedule when writing an attempt down fails, instead of sending again at once', async () => {
    const hook = await receiver();
    const { id } = await endpoint(hook.url);
    // The database refuses to write the attempt down, as PostgreSQL refused a receiver's answer with a NUL byte.
    await db.$executeRawUnsafe(`CREATE TRIGGER refuse_attempts BEFORE UPDATE OF attempts ON "WebhookDelivery" BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    try {
      worker();
      await createPlants(1, 'Unrecorded');
      const got = await hook.waitFor(4, 15_000);
      const gaps = got.slice(1).map((request, index) => request.at - got[index]!.at);
      // 100, 200, 400 ms (±20 %): the deliveries' own schedule, counted in failures in a row.
      gaps.forEach((gap, index) => expect(gap, `waits ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(BASE_MS * 2 ** index * 0.8 - 5));
      expect(logged.filter((line) => line.message === 'webhook worker: delivering failed').length).toBeGreaterThanOrEqual(3);
    } finally {
      await db.$executeRawUnsafe('DROP TRIGGER refuse_attempts');
    }
    // Once the database takes it again, the delivery is written down (sent at least once).
    const [row] = await until(() => deliveries(id), (rows) => rows[0]?.status === 'delivered');
    expect(row!.attempts).toBe(1);
  });
});

/** A test event for this endpoint, due at once, as sendTestEvent queues it (with `attempts` made before it). */
async function queueTestEvent(endpointId: number, attempts = 0): Promise<void> {
  const now = BigInt(Date.now());
  await db.webhookDelivery.create({
    data: { endpointId, eventId: newEventId(), type: TEST_EVENT_TYPE, payload: '{}', attempts, createdAtMs: now, nextAttemptAtMs: now },
  });
}

/** Waits on real time only (never on Date.now, which a test here may stop). */
async function within(timeoutMs: number, done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await done()); waited += 20) {
    if (waited > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('no wake-up is lost (the poll is long here: what is sent comes from the wake-ups alone)', () => {
  it('takes an endpoint up again when its lease was given back in the same millisecond as the next look', { timeout: 30_000 }, async () => {
    const hook = await receiver();
    const { id } = await endpoint(hook.url);
    // Every reading of the clock in one millisecond, as on a fast machine: the lease is given back at T and
    // the worker looks again at T. A lease that ends at T is free at T.
    vi.spyOn(Date, 'now').mockReturnValue(Date.now());
    try {
      const started = worker({ pollMs: 600_000 });
      await queueTestEvent(id);
      started.wake();
      await within(5_000, () => hook.received.length === 1, 'the first event');
      await within(5_000, async () => (await db.webhookEndpoint.findUniqueOrThrow({ where: { id } })).leaseOwner === null, 'the lease given back');
      await queueTestEvent(id);
      started.wake();
      await within(5_000, () => hook.received.length === 2, 'the event queued after the lease was given back');
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('keeps every retry time it was told: an earlier one does not make it forget a later one', { timeout: 30_000 }, async () => {
    const [later, sooner] = [await receiver(), await receiver()];
    later.answer((_, index) => (index === 0 ? { status: 500 } : { status: 204 }));
    sooner.answer((_, index) => (index === 0 ? { status: 500 } : { status: 204 }));
    const [laterEndpoint, soonerEndpoint] = [await endpoint(later.url), await endpoint(sooner.url)];
    const started = worker({ pollMs: 600_000 });
    // Its sixth attempt fails: the next waits 100 ms × 2^5 = 3.2 s (±20 %).
    await queueTestEvent(laterEndpoint.id, 5);
    started.wake();
    await later.waitFor(1);
    await until(() => deliveries(laterEndpoint.id), ([row]) => row?.attempts === 6);
    // Then a first failure elsewhere, retried in 100 ms: the worker's next wake-up is now that one.
    await queueTestEvent(soonerEndpoint.id);
    started.wake();
    await sooner.waitFor(2);
    // ...and the 3.2 s one still comes, not only at the next poll (ten minutes here).
    await later.waitFor(2, 10_000);
  });
});
