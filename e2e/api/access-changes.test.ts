/**
 * What decides access reaches every instance within a second, whoever changed it, and ends the streams the
 * token holds open there: two instances on one database (on PostgreSQL the scale-out setup, heard through
 * LISTEN/NOTIFY; on SQLite two processes on one file, heard through the file's data_version), each change
 * made through instance A, the token command or SQL behind the app's back, and measured on instance B, which
 * accepted the token a moment before (so it had it cached): a request refused, a live feed and a CSV export
 * ended. Without the signals B honoured its cache for up to AUTH_CACHE_TTL_MS (5 s) and the streams for good.
 */
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus } from '@test-support/api-fixture';
import { createTestDatabase, insertPlantsOf, type TestDatabase } from '@test-support/database';
import { api, type ApiClient } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';
import { type OpenFeed, openFeed } from '@test-support/sse-feed';
import { runTokenCli } from '@test-support/token-command';
import { trpcCall } from '@test-support/trpc-client';

/** The bound the instances keep: a second from the change's commit. */
const BOUND_MS = 1_000;
/** The export's pace: a burst of 100 units (10 batches of 1,000 rows), then a batch every 10 s, so it stays open. */
const RATE_LIMIT = '100/1';
const EXPORT_PLANTS = 12_000;

let database: TestDatabase;
let a: RunningServer;
let b: RunningServer;
let users = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  a = await startServer({ database, env: { RATE_LIMIT_PER_TOKEN: RATE_LIMIT } });
  b = await startServer({ database, env: { RATE_LIMIT_PER_TOKEN: RATE_LIMIT } });
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await database?.drop();
});

type Target = { id: number; token: string; user: string; onA: ApiClient; onB: ApiClient };

/** A token of a new user, accepted by both instances (each has it cached now). */
async function acceptedToken(role: 'admin' | 'member', probe: string): Promise<Target> {
  const user = `access-${++users}`;
  const issued = await a.createToken(user, role);
  const target = { ...issued, user, onA: api(a.baseUrl, issued.token), onB: api(b.baseUrl, issued.token) };
  expectStatus(await target.onA.get(probe), 200);
  expectStatus(await target.onB.get(probe), 200);
  return target;
}

/** Polls B every 10 ms until it answers `status`; fails past the bound. Resolves to the ms from `since`. */
async function refusedOnB(client: ApiClient, probe: string, status: number, since: number): Promise<number> {
  for (;;) {
    const response = await client.get(probe);
    const elapsed = Date.now() - since;
    if (response.status === status) return elapsed;
    // A 429 is an accepted token whose bucket is spent (the export on B draws on it too).
    expect([200, 429], `status ${response.status} on instance B`).toContain(response.status);
    expect(elapsed, `instance B still accepts the token ${elapsed} ms after the change`).toBeLessThan(BOUND_MS);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Waits for the stream to end; fails past the bound. Resolves to the ms from `since`. */
async function endedOnB(ended: Promise<{ at: number }>, since: number, what: string): Promise<number> {
  const ending = await Promise.race([ended, new Promise<undefined>((resolve) => setTimeout(resolve, BOUND_MS + 2_000))]);
  expect(ending, `the ${what} on instance B is still open ${BOUND_MS + 2_000} ms after the change`).toBeDefined();
  const elapsed = ending!.at - since;
  expect(elapsed, `the ${what} on instance B ended ${elapsed} ms after the change`).toBeLessThan(BOUND_MS);
  return elapsed;
}

type OpenExport = { bytes: () => number; ended: Promise<{ at: number; how: 'complete' | 'reset' }>; close: () => void };

/** GET /api/plants/export read as fast as it comes, until the server ends or cuts it. */
function openExport(server: RunningServer, token: string): OpenExport {
  let bytes = 0;
  let settle!: (ending: { at: number; how: 'complete' | 'reset' }) => void;
  const ended = new Promise<{ at: number; how: 'complete' | 'reset' }>((resolve) => (settle = resolve));
  const request = http.get(`${server.baseUrl}/api/plants/export`, { headers: { Authorization: `Bearer ${token}` }, agent: false }, (response) => {
    response.on('data', (chunk: Buffer) => (bytes += chunk.length));
    response.on('end', () => settle({ at: Date.now(), how: 'complete' }));
    response.on('close', () => settle({ at: Date.now(), how: response.complete ? 'complete' : 'reset' }));
  });
  request.on('error', () => settle({ at: Date.now(), how: 'reset' }));
  return { bytes: () => bytes, ended, close: () => request.destroy() };
}

/** A feed and an export held open on B by the token, past their first bytes. */
async function streamsOnB(target: Target): Promise<{ feed: OpenFeed; exported: OpenExport }> {
  const feed = openFeed(b.baseUrl, target.token);
  const exported = openExport(b, target.token);
  await feed.ready;
  // Past its burst: the export now waits for its bucket, open, as a long one does.
  const deadline = Date.now() + 30_000;
  while (exported.bytes() < 200_000 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(exported.bytes(), 'the export has sent its first batches').toBeGreaterThanOrEqual(200_000);
  return { feed, exported };
}

function expectEndedWithInvalidToken(feed: OpenFeed): void {
  const error = feed.events.find((event) => event.event === 'serialized-error');
  expect(error?.data, JSON.stringify(feed.events.slice(-3))).toMatchObject({ data: { error: 40101 } });
}

describe('a change that ends access, made elsewhere, on instance B', () => {
  it('a revoke through instance A: refused, and its feed and export end, within a second', async () => {
    const target = await acceptedToken('member', '/api/plants?limit=1');
    await insertPlantsOf(database, target.user, Array.from({ length: EXPORT_PLANTS }, (_, index) => ({ id: 1_000_000n + BigInt(index), name: `revoked on A ${index}` })));
    const { feed, exported } = await streamsOnB(target);
    const revoked = await trpcCall(a.baseUrl, 'mutation', 'tokens.revoke', { input: { id: target.id }, token: a.adminToken });
    expect(revoked.status).toBe(200);
    const since = Date.now();
    const [refused, feedEnded, exportEnded] = await Promise.all([
      refusedOnB(target.onB, '/api/plants?limit=1', 401, since),
      endedOnB(feed.ended, since, 'live feed'),
      endedOnB(exported.ended, since, 'export'),
    ]);
    expectEndedWithInvalidToken(feed);
    expect((await exported.ended).how, 'a cut export is reset, never ended as if whole').toBe('reset');
    console.log(`[access] revoked on A: refused on B after ${refused} ms, its feed ended after ${feedEnded} ms, its export after ${exportEnded} ms`);
  });

  it('a revoke by the token command: refused, and its feed ends, within a second', async () => {
    const target = await acceptedToken('member', '/api/plants?limit=1');
    const feed = openFeed(b.baseUrl, target.token);
    await feed.ready;
    const revoke = runTokenCli(database.url, ['revoke', String(target.id)]);
    // The command commits before it closes its connection and exits: the bound runs from its exit, at the latest.
    expect((await revoke).code).toBe(0);
    const since = Date.now();
    const [refused, feedEnded] = await Promise.all([refusedOnB(target.onB, '/api/plants?limit=1', 401, since), endedOnB(feed.ended, since, 'live feed')]);
    expectError(await target.onA.get('/api/plants?limit=1'), 'invalidToken');
    expectEndedWithInvalidToken(feed);
    console.log(`[access] revoked by the token command: refused on B after ${refused} ms, its feed ended after ${feedEnded} ms`);
  });

  it("an admin demoted by the token command: refused what only admins may, and the admin's feed ends, within a second", async () => {
    const target = await acceptedToken('admin', '/api/webhooks/endpoints');
    const feed = openFeed(b.baseUrl, target.token);
    await feed.ready;
    expect((await runTokenCli(database.url, ['create', '--user', target.user, '--role', 'member'])).code).toBe(0);
    const since = Date.now();
    const [refused, feedEnded] = await Promise.all([refusedOnB(target.onB, '/api/webhooks/endpoints', 403, since), endedOnB(feed.ended, since, 'live feed')]);
    // The token still works: its feed ended as a time limit ends one, so the client reconnects as a member.
    expect(feed.events.some((event) => event.event === 'serialized-error')).toBe(false);
    expectStatus(await target.onB.get('/api/plants?limit=1'), 200);
    const again = openFeed(b.baseUrl, target.token);
    await again.ready;
    expect(again.events[again.events.length - 1]?.data).toMatchObject({ kind: 'live' });
    again.close();
    console.log(`[access] demoted by the token command: refused as an admin on B after ${refused} ms, its admin feed ended after ${feedEnded} ms`);
  });

  it('the user deleted in SQL: refused, and the feed and export end, within a second', async () => {
    const target = await acceptedToken('member', '/api/plants?limit=1');
    await insertPlantsOf(database, target.user, Array.from({ length: EXPORT_PLANTS }, (_, index) => ({ id: 2_000_000n + BigInt(index), name: `deleted user ${index}` })));
    const { feed, exported } = await streamsOnB(target);
    // Behind the app's back, as psql or another tool would (the plants first: a user who owns plants stays).
    await database.execute('DELETE FROM "Plant" WHERE "ownerId" = (SELECT id FROM "User" WHERE name = ?)', [target.user]);
    await database.execute('DELETE FROM "User" WHERE name = ?', [target.user]);
    const since = Date.now();
    const [refused, feedEnded, exportEnded] = await Promise.all([
      refusedOnB(target.onB, '/api/plants?limit=1', 401, since),
      endedOnB(feed.ended, since, 'live feed'),
      endedOnB(exported.ended, since, 'export'),
    ]);
    console.log(`[access] user deleted in SQL: refused on B after ${refused} ms, its feed ended after ${feedEnded} ms, its export after ${exportEnded} ms`);
  });

  it('an early expiry set in SQL: refused, and the feed ends, within a second; a later expiry ends the feed when it comes', async () => {
    const target = await acceptedToken('member', '/api/plants?limit=1');
    const feed = openFeed(b.baseUrl, target.token);
    await feed.ready;
    await database.execute('UPDATE "ApiToken" SET "expiresAt" = ? WHERE id = ?', [await database.dateTime(new Date(Date.now() - 1_000)), target.id]);
    const since = Date.now();
    const [refused, feedEnded] = await Promise.all([refusedOnB(target.onB, '/api/plants?limit=1', 401, since), endedOnB(feed.ended, since, 'live feed')]);
    expectEndedWithInvalidToken(feed);

    // An expiry two seconds ahead: nothing changes when it comes, yet the stream ends then.
    const later = await acceptedToken('member', '/api/plants?limit=1');
    const expiresAt = Date.now() + 2_000;
    await database.execute('UPDATE "ApiToken" SET "expiresAt" = ? WHERE id = ?', [await database.dateTime(new Date(expiresAt)), later.id]);
    const laterFeed = openFeed(b.baseUrl, later.token);
    await laterFeed.ready;
    const ended = await endedOnB(laterFeed.ended, expiresAt, 'live feed of a token that expired');
    expect(ended).toBeGreaterThanOrEqual(0);
    console.log(`[access] expired early in SQL: refused on B after ${refused} ms, its feed ended after ${feedEnded} ms; an expiry reached ended a feed after ${ended} ms`);
  });
});
