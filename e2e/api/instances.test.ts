/**
 * Two app instances on two ports against one database: what a load balancer in front of several
 * instances gives its clients. On PostgreSQL this is the scale-out setup; on SQLite it is two processes
 * on one file (one machine). Either way the instances share everything but what they keep in memory, each
 * with a stated bound (docs/scaling.md): accepted tokens (a revoke made elsewhere takes effect within a second,
 * e2e/api/access-changes.test.ts) and, on SQLite only, rate-limit buckets (on PostgreSQL one budget per token and
 * per address is shared, taken in slices: a token gets at most its burst and a slice per instance).
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkedClient, expectError, expectStatus, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { api, rawRequest } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

const METRICS_TOKEN = randomBytes(32).toString('hex');

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


/** The calls an instance made to the shared rate-limit budget so far, from its metrics. */
async function budgetCalls(server: RunningServer): Promise<number> {
  const scrape = await api(server.baseUrl, METRICS_TOKEN).get('/api/metrics');
  expect(scrape.status).toBe(200);
  return [...scrape.text.matchAll(/^plantstore_rate_budget_calls_total\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

describe('rate limits', () => {
  let limitedFirst: RunningServer;
  let limitedSecond: RunningServer;
  // A burst of 100 (an instance holds at most a slice of 4 of it) that refills one unit per 100 s, and five
  // requests with an invalid token per address.
  const BURST = 100;
  const SLICE = 4;
  const FAILURES = 5;

  beforeAll(async () => {
    [limitedFirst, limitedSecond] = await startPair({ RATE_LIMIT_PER_TOKEN: `${BURST}/0.01`, RATE_LIMIT_AUTH_FAILURES: `${FAILURES}/0.01`, METRICS_TOKEN });
  }, 180_000);

  afterAll(async () => {
    await Promise.all([limitedFirst?.stop(), limitedSecond?.stop()]);
  });

  /** Sends `count` lists one after another and answers how many were served; the rest must be 429s. */
  async function served(client: ReturnType<typeof api>, count: number): Promise<number> {
    let answered = 0;
    for (let index = 0; index < count; index++) {
      const response = await client.get('/api/plants?limit=1');
      if (response.status === 200) answered++;
      else expectError(response, 'tooManyRequests');
    }
    return answered;
  }

  if (testEngine === 'postgresql') {
    it('share one budget per token: a burst spent on one instance is spent on the other', async () => {
      const busy = await limitedFirst.createToken('instances-busy', 'member');
      const onFirst = await served(api(limitedFirst.baseUrl, busy.token), BURST + 20);
      const onSecond = await served(api(limitedSecond.baseUrl, busy.token), 20);
      console.log(`[instances] rate limit ${BURST}/0.01 on PostgreSQL: ${BURST + 20} lists on instance 1 → ${onFirst} served; then 20 on instance 2 → ${onSecond} served`);
      expect({ onFirst, onSecond }).toEqual({ onFirst: BURST, onSecond: 0 });

      // A flood from the spent token costs the database nothing more: each instance learnt the budget's level
      // and refuses without asking until the refill (one unit per 100 s) could cover a request.
      const callsBefore = await Promise.all([limitedFirst, limitedSecond].map(budgetCalls));
      const flood = await Promise.all(Array.from({ length: 200 }, (_, index) => api([limitedFirst, limitedSecond][index % 2]!.baseUrl, busy.token).get('/api/plants?limit=1')));
      expect(flood.filter((response) => response.status !== 429)).toEqual([]);
      const callsAfter = await Promise.all([limitedFirst, limitedSecond].map(budgetCalls));
      console.log(`[instances] 200 more requests from the spent token: ${callsAfter[0]! - callsBefore[0]!} and ${callsAfter[1]! - callsBefore[1]!} calls to the shared budget`);
      expect(callsAfter.map((after, index) => after - callsBefore[index]!)).toEqual([0, 0]);
    });

    it(`give a token at most its burst and a slice per instance, all at once on both (burst ${BURST} + 2 × ${SLICE})`, async () => {
      const eager = await limitedFirst.createToken('instances-eager', 'member');
      const clients = [api(limitedFirst.baseUrl, eager.token), api(limitedSecond.baseUrl, eager.token)];
      // 75 requests in flight on each instance at once.
      const answers = await Promise.all(Array.from({ length: 150 }, (_, index) => clients[index % 2]!.get('/api/plants?limit=1')));
      for (const answer of answers.filter((response) => response.status !== 200)) expectError(answer, 'tooManyRequests');
      const ok = answers.filter((response) => response.status === 200).length;
      console.log(`[instances] rate limit ${BURST}/0.01 on PostgreSQL: 150 lists at once over 2 instances → ${ok} served (bound ${BURST} + 2 × ${SLICE})`);
      expect(ok).toBeLessThanOrEqual(BURST + 2 * SLICE);
      // What a slice leaves behind on an instance is not lost to the token for long, but it is not served here.
      expect(ok).toBeGreaterThanOrEqual(BURST - 2 * SLICE);
    });

    it('share one budget per address for invalid tokens', async () => {
      const stranger = (baseUrl: string) => api(baseUrl, `pst_${'Q'.repeat(43)}`);
      const statuses = async (baseUrl: string, count: number) => {
        const seen: number[] = [];
        for (let index = 0; index < count; index++) seen.push((await stranger(baseUrl).get('/api/plants')).status);
        return seen;
      };
      const onFirst = await statuses(limitedFirst.baseUrl, FAILURES + 1);
      const onSecond = await statuses(limitedSecond.baseUrl, 2);
      expect({ onFirst, onSecond }).toEqual({ onFirst: [...Array<number>(FAILURES).fill(401), 429], onSecond: [429, 429] });
    });
  } else {
    it('are counted per process on SQLite: each gives a token its own burst', async () => {
      const busy = await limitedFirst.createToken('instances-busy', 'member');
      const onFirst = await served(api(limitedFirst.baseUrl, busy.token), BURST + 20);
      const onSecond = await served(api(limitedSecond.baseUrl, busy.token), BURST + 20);
      console.log(`[instances] rate limit ${BURST}/0.01 on SQLite: ${BURST + 20} lists on each of 2 processes → ${onFirst} and ${onSecond} served (bound: 2 × ${BURST})`);
      expect({ onFirst, onSecond }).toEqual({ onFirst: BURST, onSecond: BURST });
    });
  }
});
