/**
 * Background work against a real server on a database with a backlog built behind its back: 87,000 plants
 * and their change log deleted (tens of thousands of free pages in the SQLite file) and 20,000 idempotency
 * keys past their 24 hours. The server starts on it and works the backlog off in slices while a client asks
 * every few milliseconds, from the moment the port opens: no request waits behind the work for long (the
 * first one included), the work gets done with no traffic to drive it, and /api/metrics shows what is left.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, describe, expect, it } from 'vitest';

import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { api } from '@test-support/http-client';
import { freePort } from '@test-support/processes';
import { type RunningServer, startServer } from '@test-support/server-process';

const METRICS_TOKEN = randomBytes(32).toString('hex');
const PLANTS = 87_000;
const EXPIRED_KEYS = 20_000;
/** Names near the longest a plant may have, so 80,000 of them leave a file of the size the backlog needs. */
const LONG_NAME = `Nephrolepis exaltata ${'Bostoniensis '.repeat(13)}`;
/**
 * What a request may wait for while the backlog is worked off, the start's own cost and a busy shared machine
 * included. A slice holds the event loop for ~10 ms of work (more on the wall clock when other processes take
 * the CPU); the sweep as one loop holds it for seconds (this test at 8cd33f9, on 2 shared cores: 2,222 ms at a
 * load of 4, 12,621–14,537 ms at 19–22). The first request is mostly the start's own: 221 ms with no backlog
 * at all at a load of 12, 626 ms on PostgreSQL at 25.
 */
const FIRST_REQUEST_BOUND_MS = 1_500;
/**
 * The longest stall of the event loop after the start, as the server measures it (prom-client's monitor, on the
 * wall clock): 645 ms was seen once on a full suite's busy machine, the sweep as one loop stalls for 2 s at a load of 4.
 */
const STALL_BOUND_MS = 1_000;

const servers: RunningServer[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
  await Promise.all(databases.map((database) => database.drop()));
});

/** One value of a scrape: the sum of the samples of `name` whose labels include `labels`. */
function sampleOf(scrape: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let found: number | undefined;
  for (const line of scrape.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample || sample[1] !== name) continue;
    if (!Object.entries(labels).every(([label, value]) => (sample[2] ?? '').includes(`${label}="${value}"`))) continue;
    found = (found ?? 0) + Number(sample[3]);
  }
  return found;
}

/** The integers 1 to `count` as a table of one column, `value`, on the suite's engine. */
const series = (count: number) =>
  testEngine === 'sqlite'
    ? `(WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < ${count}) SELECT value FROM n)`
    : `generate_series(1, ${count}) AS value`;

const sqlitePragma = async (database: TestDatabase, name: string) => Number(Object.values((await database.query(`PRAGMA ${name}`))[0]!)[0]);

/** The backlog as the database has it, read by this test's own connection. */
async function backlog(database: TestDatabase): Promise<{ freePages: number; expiredKeys: number }> {
  const now = await database.dateTime(new Date());
  const [row] = await database.query<{ count: bigint }>('SELECT COUNT(*) AS count FROM "IdempotencyKey" WHERE "expiresAt" < ?', [now]);
  return { freePages: testEngine === 'sqlite' ? await sqlitePragma(database, 'freelist_count') : 0, expiredKeys: Number(row!.count) };
}

describe(`background work in slices (${testEngine})`, () => {
  it('works a start-up backlog off without holding requests, with no traffic to drive it, and shows it in /api/metrics', { timeout: 300_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    // The first start makes the tables and the admin; the backlog is then written behind the server's back.
    const first = await startServer({ database });
    const adminToken = first.adminToken;
    await first.stop();

    const [admin] = await database.query<{ id: bigint }>('SELECT id FROM "User" WHERE name = ?', ['admin']);
    const now = await database.dateTime(new Date());
    const longAgo = await database.dateTime(new Date(Date.now() - 3 * 24 * 3_600_000));
    const expiredAt = await database.dateTime(new Date(Date.now() - 2 * 24 * 3_600_000));
    await database.execute(
      `INSERT INTO "IdempotencyKey" ("userId", key, fingerprint, status, response, "lockedUntil", "createdAt", "expiresAt")
       SELECT ?, 'expired-' || value, 'f', 200, ?, ?, ?, ? FROM ${series(EXPIRED_KEYS)}`,
      [admin!.id, 'x'.repeat(600), longAgo, longAgo, expiredAt],
    );
    await database.execute(
      `INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
       SELECT value, ? || value, ? || value, 'nephrolepis-' || (value % 500), ?, ? FROM ${series(PLANTS)}`,
      [LONG_NAME, LONG_NAME.toLowerCase(), admin!.id, now],
    );
    await database.execute('DELETE FROM "Plant"');
    await database.execute('DELETE FROM "PlantChange"');
    const built = await backlog(database);
    console.log(`backlog built: ${built.freePages} free pages, ${built.expiredKeys} expired keys`);
    if (testEngine === 'sqlite') expect(built.freePages).toBeGreaterThan(35_000);
    expect(built.expiredKeys).toBe(EXPIRED_KEYS);

    // A client asks every 5 ms from before the port opens: the first answer is the first request after the start.
    const port = await freePort();
    const latencies: { at: number; ms: number }[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        const sent = performance.now();
        try {
          const response = await fetch(`http://127.0.0.1:${port}/api/plants?limit=1`, { headers: { Authorization: `Bearer ${adminToken}` } });
          await response.arrayBuffer();
          if (response.status === 200) latencies.push({ at: sent, ms: performance.now() - sent });
        } catch {
          // Not listening yet.
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const startedAt = performance.now();
    const server = await startServer({ database, port, env: { METRICS_TOKEN, RATE_LIMIT_PER_TOKEN: 'off' } });
    servers.push(server);
    const metrics = api(server.baseUrl, METRICS_TOKEN);
    const scrape = async () => (await metrics.get('/api/metrics')).text;

    // The backlog as /api/metrics shows it at the start. The scrape also starts the event-loop monitor's next
    // window (each scrape reads and resets it): the start itself (loading, the migrations' check) is left out.
    const backlogMetric = (text: string) => ({
      freePages: sampleOf(text, 'plantstore_background_backlog', { job: 'sqlite-free-pages' }),
      expiredKeys: sampleOf(text, 'plantstore_background_backlog', { job: 'idempotency-sweep' }),
    });
    const shownAtStart = backlogMetric(await scrape());

    // A while with a client asking every 5 ms, then none at all: the work goes on with no request to drive it
    // (this test reads the backlog through its own connection, not the server).
    const quietFrom = performance.now() + 3_000;
    let left = built;
    for (const deadline = performance.now() + 180_000; performance.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (performance.now() > quietFrom) probing = false;
      left = await backlog(database);
      if (left.freePages === 0 && left.expiredKeys === 0) break;
    }
    const workedOffMs = performance.now() - startedAt;
    probing = false;
    await probe;
    const afterwards = await scrape();
    const longestStallMs = (sampleOf(afterwards, 'nodejs_eventloop_lag_max_seconds') ?? 0) * 1000;
    const shownAtEnd = backlogMetric(afterwards);

    const firstAnswer = latencies[0]!;
    const longest = latencies.reduce((worst, latency) => (latency.ms > worst.ms ? latency : worst), firstAnswer);
    console.log(
      `first request ${firstAnswer.ms.toFixed(1)} ms; longest of ${latencies.length} requests ${longest.ms.toFixed(1)} ms at +${(longest.at - startedAt).toFixed(0)} ms; ` +
        `longest event-loop stall after the start ${longestStallMs.toFixed(1)} ms; backlog worked off in ${(workedOffMs / 1000).toFixed(1)} s ` +
        `(in /api/metrics at the start: ${JSON.stringify(shownAtStart)}, at the end: ${JSON.stringify(shownAtEnd)})`,
    );
    expect(left).toEqual({ freePages: 0, expiredKeys: 0 });
    expect(firstAnswer.ms).toBeLessThan(FIRST_REQUEST_BOUND_MS);
    expect(longest.ms).toBeLessThan(FIRST_REQUEST_BOUND_MS);
    expect(longestStallMs).toBeLessThan(STALL_BOUND_MS);
    expect(shownAtStart.expiredKeys).toBeGreaterThan(0);
    expect(shownAtEnd.expiredKeys).toBe(0);
    if (testEngine === 'sqlite') {
      expect(shownAtStart.freePages).toBeGreaterThan(0);
      expect(shownAtEnd.freePages).toBe(0);
    }
  });
});
