/**
 * The admin page's live feed (plants.changes, tRPC's SSE subscription) against real servers: two instances
 * on one database (on PostgreSQL the scale-out setup), a change made through REST on one arriving on a
 * stream held by the other, the access rule (a member hears only of their own plants), the bound on open
 * streams per token, and resuming after a dropped connection with tRPC's lastEventId.
 */
import { createTRPCClient, httpSubscriptionLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { AppRouter } from '@/server/app-router';

import { checkedClient, expectStatus, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { changedFields } from '@test-support/plant-fields';
import { type RunningServer, startServer } from '@test-support/server-process';
import { until } from '@test-support/waiting';

let database: TestDatabase;
let first: RunningServer;
let second: RunningServer;

beforeAll(async () => {
  database = await createTestDatabase();
  first = await startServer({ database });
  second = await startServer({ database });
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  await database?.drop();
});

type Event = { id: string; data: { kind: string; id?: bigint; name?: string; tag?: string | null } };

/** A stream of plants.changes on `server` as `token`, collecting what arrives. */
function listen(server: RunningServer, token: string, lastEventId?: string) {
  const client = createTRPCClient<AppRouter>({
    links: [
      httpSubscriptionLink({
        url: `${server.baseUrl}/api/trpc`,
        transformer: superjson,
        EventSource,
        eventSourceOptions: () => ({ fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }) }),
      }),
    ],
  });
  const events: Event[] = [];
  const errors: unknown[] = [];
  let started: () => void;
  // A new stream says `live` first, once it is registered: from then on nothing is missed. A resumed one starts at once.
  const ready = new Promise<void>((resolve) => (started = resolve));
  const subscription = client.plants.changes.subscribe(lastEventId === undefined ? undefined : { lastEventId }, {
    onStarted: () => {
      if (lastEventId !== undefined) started();
    },
    onData: (event) => {
      const tracked = event as unknown as Event;
      if (tracked.data.kind === 'live') started();
      else events.push(tracked);
    },
    onError: (error) => {
      errors.push(error);
      started();
    },
  });
  return { events, errors, ready, stop: () => subscription.unsubscribe() };
}


describe('the live feed across two instances', () => {
  it('brings a REST create, rename and delete made on one instance to a stream on the other within a second', async () => {
    const alice = await first.createToken('live-alice', 'member');
    const stream = listen(second, alice.token);
    await stream.ready;
    const rest = await checkedClient(first, alice.token);
    expectStatus(await rest.post('/api/plants', plantBody(9_001n, 'Live fern', 'shade')), 200);
    // From the answer (the commit), not from sending: how long the create itself took is not the feed's delay.
    const committedAt = Date.now();
    await until(() => stream.events.length >= 1, 'the create');
    expect(Date.now() - committedAt).toBeLessThan(2_000);
    expectStatus(await rest.request('PATCH', '/api/plants/9001', { body: '{"name":"Live fern, renamed","tag":null}', contentType: 'application/merge-patch+json' }), 200);
    expectStatus(await rest.delete('/api/plants/9001'), 204);
    await until(() => stream.events.length >= 3, 'the rename and the delete');
    expect(stream.events.map((event) => event.data)).toEqual([
      { kind: 'created', id: 9_001n, ...changedFields({ name: 'Live fern', tag: 'shade' }) },
      { kind: 'updated', id: 9_001n, ...changedFields({ name: 'Live fern, renamed' }) },
      { kind: 'deleted', id: 9_001n },
    ]);
    stream.stop();
  });

  it("tells a member only of their own plants, an admin of everyone's", async () => {
    const bob = await first.createToken('live-bob', 'member');
    const carol = await first.createToken('live-carol', 'member');
    const admin = await first.createToken('live-admin', 'admin');
    const bobs = listen(first, bob.token);
    const admins = listen(second, admin.token);
    await Promise.all([bobs.ready, admins.ready]);
    expectStatus(await (await checkedClient(second, carol.token)).post('/api/plants', plantBody(9_101n, "Carol's")), 200);
    expectStatus(await (await checkedClient(second, bob.token)).post('/api/plants', plantBody(9_102n, "Bob's")), 200);
    await until(() => bobs.events.length >= 1 && admins.events.length >= 2, 'the creates');
    // Bob's stream saw his own plant and nothing of Carol's, even though hers committed first.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(bobs.events.map((event) => event.data.id)).toEqual([9_102n]);
    expect(admins.events.map((event) => event.data.id)).toEqual([9_101n, 9_102n]);
    bobs.stop();
    admins.stop();
  });

  it('resumes after a dropped connection from lastEventId, with what happened meanwhile', async () => {
    const dave = await first.createToken('live-dave', 'member');
    const rest = await checkedClient(first, dave.token);
    const stream = listen(first, dave.token);
    await stream.ready;
    expectStatus(await rest.post('/api/plants', plantBody(9_201n, 'before the drop')), 200);
    await until(() => stream.events.length === 1, 'the first event');
    const last = stream.events[0]!.id;
    stream.stop();
    expectStatus(await rest.post('/api/plants', plantBody(9_202n, 'while away')), 200);
    // Reconnected to the other instance, as a balancer may do.
    const resumed = listen(second, dave.token, last);
    await resumed.ready;
    await until(() => resumed.events.length >= 1, 'the missed event');
    expect(resumed.events.map((event) => event.data.id)).toEqual([9_202n]);
    resumed.stop();
  });

  it('refuses a token more than four open streams, and a stream without a valid token', async () => {
    const erin = await first.createToken('live-erin', 'member');
    const streams = Array.from({ length: 4 }, () => listen(first, erin.token));
    await Promise.all(streams.map((stream) => stream.ready));
    const fifth = listen(first, erin.token);
    await until(() => fifth.errors.length > 0, 'the refusal');
    expect(String((fifth.errors[0] as Error).message)).toMatch(/at most 4 live feeds/);
    for (const stream of [...streams, fifth]) stream.stop();

    // No token: the stream carries tRPC's error (40100) and ends; the client does not retry an UNAUTHORIZED.
    const response = await fetch(`${first.baseUrl}/api/trpc/plants.changes`, { headers: { accept: 'text/event-stream' }, signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    expect(text).toContain('event: serialized-error');
    expect(text).toContain('"error":40100');
  });
});
