/**
 * Two app instances on two ports against one database: what a load balancer in front of several
 * instances gives its clients. On PostgreSQL this is the scale-out setup; on SQLite it is two processes
 * on one file (one machine). Either way the instances share everything but two things kept in memory,
 * each with a stated bound (docs/scaling.md): accepted tokens (a revoke made elsewhere takes
 * effect within the auth cache's lifetime) and rate-limit buckets (each instance counts its own).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseConfig } from '@/server/config';

/** The default bound on how long another process may honour a revoked token. */
const DEFAULT_AUTH_CACHE_TTL_MS = parseConfig({}).AUTH_CACHE_TTL_MS;

import { checkedClient, expectError, expectStatus, msUntilRefused, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { api, rawRequest } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';
import { trpcCall } from '@test-support/trpc-client';

let database: TestDatabase;
let first: RunningServer;
let second: RunningServer;
let adminToken: string;


/** Starts two instances at once; when one fails, the other is stopped before the failure is passed on. */
async function startPair(env?: Record<string, string>): Promise<[RunningServer, RunningServer]> {
  const [one, other] = await Promise.allSettled([startServer({ database, env }), startServer({ database, env })]);
  if (one.status === 'fulfilled' && other.status === 'fulfilled') return [one.value, other.value];
  await Promise.all([one, other].map((result) => (result.status === 'fulfilled' ? result.value.stop() : undefined)));
  throw (one.status === 'rejected' ? one.reason : (other as PromiseRejectedResult).reason) as Error;
}

beforeAll(async () => {
  database = await createTestDatabase();
  // Both start on the empty database at once, as instances behind a load balancer do.
  [first, second] = await startPair();
  const printed = [first.adminToken, second.adminToken].filter((token) => token !== '');
  expect(printed, 'exactly one instance creates the first admin and prints its token').toHaveLength(1);
  adminToken = printed[0]!;
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  await database?.drop();
});

describe('one database behind two instances', () => {
  it('lists on one what was created on the other, and deletes there what the first created', async () => {
    const member = await first.createToken('instances-member', 'member');
    const onFirst = await checkedClient(first, member.token);
    const onSecond = await checkedClient(second, member.token);

    expectStatus(await onFirst.post('/api/plants', plantBody(1_001n, 'Monstera', 'tropical')), 200);
    const listed = await onSecond.get('/api/plants');
    expectStatus(listed, 200);
    expect(listed.json).toEqual([{ id: 1_001n, name: 'Monstera', tag: 'tropical' }]);

    expectStatus(await onSecond.delete('/api/plants/1001'), 204);
    const afterDelete = await onFirst.get('/api/plants');
    expectStatus(afterDelete, 200);
    expect(afterDelete.json).toEqual([]);
    expectError(await onFirst.delete('/api/plants/1001'), 'plantNotFound');
  });

  it('answers exactly one 200 to parallel creates of one id spread over both instances', async () => {
    const clients = [await checkedClient(first, adminToken), await checkedClient(second, adminToken)];
    for (let round = 0; round < 3; round++) {
      const id = 2_000n + BigInt(round);
      // Each on a connection of its own, as separate clients: a create must not be sent on a pooled keep-alive
      // connection the server is closing as idle at that moment (on a busy machine the client notices late),
      // which no client may retry for a POST.
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, index) =>
          rawRequest([first, second][index % 2]!.baseUrl, {
            method: 'POST',
            path: '/api/plants',
            headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json', Connection: 'close' },
            chunks: [Buffer.from(plantBody(id, `race ${round} #${index}`))],
          }),
        ),
      );
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 200), `round ${round}: ${statuses.join(' ')}`).toHaveLength(1);
      for (const answer of answers.filter((candidate) => candidate.status !== 200)) expectError(answer, 'plantIdTaken');
      const winner = answers.find((answer) => answer.status === 200)!;
      // The plant stored is the one whose create was answered 200, whichever instance answered it.
      const stored = (await clients[1]!.get(`/api/plants?after=${id - 1n}&limit=1`)).json;
      expect(stored).toEqual([winner.json]);
      console.log(`[instances] round ${round}: 40 creates of id ${id} over 2 instances → 1 × 200, 39 × 400/40006`);
    }
  });
});


describe('a revoked token on both instances', () => {
  // The bound is the auth cache's lifetime; a second of slack covers the poll and a loaded machine.
  const bound = DEFAULT_AUTH_CACHE_TTL_MS + 1_000;

  it(`is refused at once by the instance that revoked it, and by the other within ${DEFAULT_AUTH_CACHE_TTL_MS / 1000} s`, async () => {
    const doomed = await first.createToken('instances-doomed', 'member');
    const onFirst = await checkedClient(first, doomed.token);
    const onSecond = await checkedClient(second, doomed.token);
    // Both instances have just accepted it, so both remember it.
    expectStatus(await onFirst.get('/api/plants'), 200);
    expectStatus(await onSecond.get('/api/plants'), 200);

    const revokedAt = Date.now();
    expect((await trpcCall(first.baseUrl, 'mutation', 'tokens.revoke', { input: { id: doomed.id }, token: adminToken })).status).toBe(200);
    expectError(await onFirst.get('/api/plants'), 'invalidToken');
    const secondMs = await msUntilRefused(onSecond, revokedAt, bound);
    console.log(`[instances] revoked through instance 1: refused there at once, on instance 2 after ${secondMs} ms (bound ${DEFAULT_AUTH_CACHE_TTL_MS} ms)`);
  });

  it(`is refused by both within ${DEFAULT_AUTH_CACHE_TTL_MS / 1000} s when the token command revokes it`, async () => {
    const doomed = await first.createToken('instances-doomed-cli', 'member');
    const clients = [await checkedClient(first, doomed.token), await checkedClient(second, doomed.token)];
    for (const client of clients) expectStatus(await client.get('/api/plants'), 200);

    await first.revokeToken(doomed.id);
    // The command has committed its revoke when it exits; the bound runs from there.
    const revokedAt = Date.now();
    const refusedAfter = await Promise.all(clients.map((client) => msUntilRefused(client, revokedAt, bound)));
    console.log(`[instances] revoked by the token command: refused after ${refusedAfter.join(' and ')} ms (bound ${DEFAULT_AUTH_CACHE_TTL_MS} ms)`);
  });
});

describe('rate limits', () => {
  let limitedFirst: RunningServer;
  let limitedSecond: RunningServer;

  beforeAll(async () => {
    // A burst of 10 that refills one request per 100 s: what each instance serves is its own burst.
    const env = { RATE_LIMIT_PER_TOKEN: '10/0.01' };
    [limitedFirst, limitedSecond] = await startPair(env);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([limitedFirst?.stop(), limitedSecond?.stop()]);
  });

  it('are counted per instance: a token gets at most one burst from each', async () => {
    const busy = await limitedFirst.createToken('instances-busy', 'member');
    const clients = [api(limitedFirst.baseUrl, busy.token), api(limitedSecond.baseUrl, busy.token)];
    const served = [0, 0];
    for (let index = 0; index < 40; index++) {
      const response = await clients[index % 2]!.get('/api/plants?limit=1');
      if (response.status === 200) served[index % 2]!++;
      else expectError(response, 'tooManyRequests');
    }
    expect(served, 'requests served by each instance out of 20 sent to each').toEqual([10, 10]);
    console.log(`[instances] rate limit 10/0.01 per instance: 40 requests over 2 instances → ${served[0]! + served[1]!} served (bound: 2 × 10)`);
  });
});
