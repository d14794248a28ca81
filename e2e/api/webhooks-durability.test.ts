/**
 * The outbox under the two things that break naive webhook senders: a crash between a commit and its
 * delivery, and several instances sending from one database.
 *
 * - SIGKILL under write load: creates run at full speed against a receiver that answers at once, the
 *   server is killed mid-stream (no shutdown code runs), and a server restarted on the same database
 *   must deliver the event of every create it acknowledged (at least once: the deliveries sent but not
 *   yet written down when the kill came arrive twice).
 * - SIGTERM in the middle of a batch: the server stops without hanging, writes down what was answered,
 *   starts no attempt after it, and a restarted server sends the rest.
 * - Two instances on one database (the scale-out setup on PostgreSQL; two processes on one file on
 *   SQLite), creates spread over both: every event arrives exactly once, one request at a time, in the
 *   order the events were committed.
 */
import http from 'node:http';

import { afterAll, describe, expect, it } from 'vitest';

import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

import { createOver } from '@test-support/api-fixture';
import { eventually, plantIdOf, registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { api } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

const started: RunningServer[] = [];
const receivers: Receiver[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  // Only the processes this file started, by their own pid.
  for (const server of started) if (!server.exited()) server.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all(databases.map((database) => database.drop()));
});

async function start(database: TestDatabase, env: Record<string, string>): Promise<RunningServer> {
  const server = await startServer({ database, env });
  started.push(server);
  return server;
}

/** Commit (the event's timestamp) to arrival at the receiver, in ms: p50 and p99. */
function latencies(receiver: Receiver): { p50: number; p99: number } {
  const values = receiver.received.map((request) => request.at - Date.parse(/"timestamp":"([^"]+)"/.exec(request.body)![1]!)).sort((a, b) => a - b);
  const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

describe('a crash between commit and delivery', () => {
  it('loses no event: after a SIGKILL under write load, the restarted server delivers every acknowledged create', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = webhookEnv();
    const hook = await receiver();
    const first = await start(database, env);
    const token = first.adminToken;
    await registerEndpoint(api(first.baseUrl, token), hook.url, ['plant.created']);

    const acknowledged = new Set<string>();
    const attempted = new Set<string>();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    let stopped = false;
    let nextId = 1n;
    const loops = Array.from({ length: 16 }, async () => {
      const stopAt = Date.now() + 30_000;
      while (!stopped && Date.now() < stopAt) {
        const id = nextId++;
        attempted.add(String(id));
        if ((await createOver(agent, first.baseUrl, token, id, { name: 'durable', timeoutMs: 10_000 })) === 200) acknowledged.add(String(id));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    first.kill('SIGKILL');
    stopped = true;
    const { signal } = await first.exit;
    await Promise.all(loops);
    agent.destroy();
    expect(signal).toBe('SIGKILL');
    const deliveredBeforeKill = new Set(hook.received.map((request) => plantIdOf(request.body))).size;
    expect(acknowledged.size).toBeGreaterThan(0);

    const restartedAt = Date.now();
    const second = await start(database, env);
    const all = await eventually(
      async () => new Set(hook.received.map((request) => plantIdOf(request.body))),
      (ids) => [...acknowledged].every((id) => ids.has(id)),
      60_000,
      'every acknowledged create delivered',
    );
    const doneAfterMs = Date.now() - restartedAt;
    const phantoms = [...all].filter((id) => !attempted.has(id));
    const duplicates = hook.received.length - new Set(hook.received.map((request) => request.headers['webhook-id'])).size;
    console.log(
      `[webhooks-crash] ${acknowledged.size} creates acknowledged in 1.5 s, ${deliveredBeforeKill} delivered before the SIGKILL; ` +
        `after the restart every one of them delivered within ${doneAfterMs} ms of starting it; lost 0; delivered twice ${duplicates}`,
    );
    expect(phantoms, 'events for creates nobody asked for').toEqual([]);
    // At least once: what was sent but not yet written down when the kill came arrives again. The worker
    // has at most 100 deliveries sent and not written down (webhooks/delivery/endpoint-sender.ts, UNWRITTEN_MAX: the sending
    // thread sends while the lot before is written), so at most 100 events arrive twice.
    expect(duplicates).toBeLessThanOrEqual(100);
    await second.stop();
  });
});

describe('a SIGTERM in the middle of a batch', () => {
  it('stops without hanging, starts no attempt after it, and the restarted server sends the rest: nothing lost', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const env = webhookEnv();
    const hook = await receiver();
    // The first answer takes 3 s, so the other seven creates wait behind it and go to the sending thread as
    // one batch. The third request is in flight when the SIGTERM comes, and answered 204 a moment later
    // (within WEBHOOK_SLOW_ATTEMPT_MS, so only the stop ends the batch there).
    hook.answer((_, index) => (index === 0 ? { status: 204, delayMs: 3_000 } : index === 2 ? { status: 204, delayMs: 700 } : { status: 204 }));
    const first = await start(database, env);
    const token = first.adminToken;
    await registerEndpoint(api(first.baseUrl, token), hook.url, ['plant.created']);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ids: string[] = [];
    for (let id = 1n; id <= 8n; id++) {
      expect(await createOver(agent, first.baseUrl, token, id, { name: 'terminated', timeoutMs: 10_000 })).toBe(200);
      ids.push(String(id));
    }
    agent.destroy();
    // Done before the first answer: the third request goes out in one batch with those after it.
    expect(hook.received.length, 'the creates were done before the first answer').toBeLessThanOrEqual(1);
    await hook.waitFor(3, 30_000);
    first.kill('SIGTERM');
    const { code } = await first.exit;
    expect(code).toBe(0);
    // The one in flight finished; nothing started after the SIGTERM.
    expect(hook.received.map((request) => plantIdOf(request.body))).toEqual(ids.slice(0, 3));

    // The restarted server sends the rest, in order; what was answered before the stop was written down
    // then, so nothing arrives twice.
    const second = await start(database, env);
    await hook.waitFor(8, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(hook.received.map((request) => plantIdOf(request.body))).toEqual(ids);
    await second.stop();
  });
});

describe('two instances on one database', () => {
  it('deliver each event exactly once, one at a time per endpoint, in commit order, under load', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    // The production lease (30 s, renewed every 10 s), not the suite's 1.5 s: exactly once between two live
    // instances rests on the lease holder renewing in time, and on a busy machine a renewal (a write that
    // queues for SQLite's lock) can take longer than 1.5 s. Nothing here needs a lease to run out.
    const env = webhookEnv({ WEBHOOKS_LEASE_MS: '30000' });
    const hook = await receiver();
    const [one, two] = await Promise.all([start(database, env), start(database, env)]);
    const token = one.adminToken || two.adminToken;
    await registerEndpoint(api(one.baseUrl, token), hook.url, ['plant.created']);

    const total = 300;
    const agents = [new http.Agent({ keepAlive: true, maxSockets: 8 }), new http.Agent({ keepAlive: true, maxSockets: 8 })];
    let next = 0;
    const statuses = await Promise.all(
      Array.from({ length: 16 }, async (_, loop) => {
        const seen: (number | null)[] = [];
        for (let id = next++; id < total; id = next++) seen.push(await createOver(agents[loop % 2]!, [one, two][loop % 2]!.baseUrl, token, BigInt(id + 1), { name: 'durable', timeoutMs: 10_000 }));
        return seen;
      }),
    );
    for (const agent of agents) agent.destroy();
    expect(statuses.flat().filter((status) => status !== 200)).toEqual([]);

    await hook.waitFor(total, 60_000);
    // Anything sent twice would arrive just after; give it the time to.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const eventIds = hook.received.map((request) => String(request.headers['webhook-id']));
    expect(hook.received).toHaveLength(total);
    expect(new Set(eventIds).size).toBe(total);
    expect(new Set(hook.received.map((request) => plantIdOf(request.body))).size).toBe(total);
    expect(hook.maxConcurrent()).toBe(1);
    const outbox = (await database.query<{ eventId: string }>('SELECT "eventId" FROM "WebhookDelivery" ORDER BY "id"')).map((row) => row.eventId);
    // In the order the events were committed. On SQLite (one writer) that is the outbox's id order; on
    // PostgreSQL ids are taken before commit, so two creates committing at the same moment may swap.
    const position = new Map(outbox.map((eventId, index) => [eventId, index]));
    const swapped = eventIds.filter((eventId, index) => index > 0 && position.get(eventId)! < position.get(eventIds[index - 1]!)!).length;
    if (database.engine === 'sqlite') expect(eventIds).toEqual(outbox);
    const { p50, p99 } = latencies(hook);
    console.log(
      `[webhooks-instances] ${total} creates over 2 instances (16 parallel): each event delivered once, one at a time; ` +
        `${swapped} arrived before an event with a smaller outbox id; commit → receiver p50 ${p50} ms, p99 ${p99} ms (a burst, so mostly queueing)`,
    );
    await Promise.all([one.stop(), two.stop()]);
  });
});

async function receiver(): Promise<Receiver> {
  const hook = await startReceiver();
  receivers.push(hook);
  return hook;
}
