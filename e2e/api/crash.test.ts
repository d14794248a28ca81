/**
 * Crash safety: a 200 means the plant is on disk. Creates run at full speed, the server process is killed
 * with SIGKILL (no shutdown code runs), and a server restarted on the same file must list every plant it
 * acknowledged. Three kills in a row, each on the database the previous crash left behind.
 *
 * `startServer` runs the test build's server.mjs in the process it spawns, so `kill('SIGKILL')` hits the server itself.
 *
 * What this proves is process-crash safety (a 200 is committed before it is sent). Power loss, which
 * `synchronous=FULL` is for, cannot be simulated here.
 */
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { nextLink, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { api, describeExchange } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

const KILLS = 3;
const LOOPS = 16;
const LOAD_MS = 1_500;
// The rate limit is off: this measures durability at full speed, not the limiter.
const env = { RATE_LIMIT_PER_TOKEN: 'off' };
const killed: RunningServer[] = [];

afterAll(async () => {
  // Only the processes this file started, by their own pid.
  for (const server of killed) if (!server.exited()) server.kill('SIGKILL');
});

/** One create over a keep-alive agent; resolves with the status, or null when no answer came (the kill). */
function create(agent: http.Agent, baseUrl: string, token: string, id: bigint): Promise<{ status: number; text: string } | null> {
  return new Promise((resolve) => {
    const body = Buffer.from(plantBody(id, `crash ${id}`, 'durable'));
    const request = http.request(
      `${baseUrl}/api/plants`,
      {
        method: 'POST',
        agent,
        timeout: 10_000,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': body.length },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(response.complete ? { status: response.statusCode ?? 0, text } : null));
        response.on('error', () => resolve(null));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(null));
    request.end(body);
  });
}

describe('SIGKILL under write load', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  it(`loses no acknowledged create across ${KILLS} kills`, { timeout: 240_000 }, async () => {
    const acknowledged = new Set<bigint>();
    const attempted = new Set<bigint>();
    const unexpected: string[] = [];
    let adminToken = '';
    let nextId = 1n;
    let killsSurvived = 0;
    let unanswered = 0;

    for (let round = 1; round <= KILLS; round++) {
      const server = await startServer({ database, env });
      killed.push(server);
      if (round === 1) {
        adminToken = server.adminToken;
        expect(adminToken, 'the first start printed an admin token').toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
      } else {
        // Everything acknowledged before the previous kill is there after the restart.
        const listed = await listAll(server.baseUrl, adminToken);
        const lost = [...acknowledged].filter((id) => !listed.has(id));
        expect(lost.length, `round ${round}: acknowledged creates missing after the kill (${lost.slice(0, 10).join(', ')})`).toBe(0);
        killsSurvived++;
      }

      const agent = new http.Agent({ keepAlive: true, maxSockets: LOOPS });
      let stopped = false;
      const before = acknowledged.size;
      let loopsEnded = false;
      const loops = Array.from({ length: LOOPS }, async () => {
        // Bounded: the loops stop at the kill, and in any case after 30 s.
        const stopAt = Date.now() + 30_000;
        while (!stopped && Date.now() < stopAt) {
          const id = nextId++;
          attempted.add(id);
          const answer = await create(agent, server.baseUrl, adminToken, id);
          if (answer === null) unanswered++;
          else if (answer.status === 200) acknowledged.add(id);
          else unexpected.push(`create ${id}: ${answer.status} ${answer.text}`);
        }
        loopsEnded = true;
      });
      await new Promise((resolve) => setTimeout(resolve, LOAD_MS));
      // On a busy machine the first creates of a fresh server can take longer than LOAD_MS: the kill waits for
      // one to be acknowledged (within the loops' own 30 s), so the check below is about durability, not speed.
      while (acknowledged.size === before && !loopsEnded) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(server.exited(), 'the server is still running before the kill').toBe(false);
      // The server itself (this pid is node running server.mjs), mid-traffic.
      server.kill('SIGKILL');
      stopped = true;
      const { signal } = await server.exit;
      await Promise.all(loops);
      agent.destroy();
      expect(signal, 'the server died of the SIGKILL').toBe('SIGKILL');
      console.log(`[crash] round ${round}: ${acknowledged.size - before} creates acknowledged, then SIGKILL (pid ${server.pid})`);
      expect(acknowledged.size - before, `round ${round}: creates acknowledged before the kill`).toBeGreaterThan(0);
    }

    // The final restart goes through the suite's own helper, on the database the last kill left.
    const restarted = await startServer({ database, env });
    try {
      const listed = await listAll(restarted.baseUrl, adminToken);
      const lost = [...acknowledged].filter((id) => !listed.has(id));
      if (lost.length === 0) killsSurvived++;
      const phantoms = [...listed].filter((id) => !attempted.has(id));
      console.log(
        `[crash] creates acknowledged: ${acknowledged.size}; kills survived: ${killsSurvived}/${KILLS}; writes lost: ${lost.length}; ` +
          `requests cut by the kills: ${unanswered}; plants listed after the last restart: ${listed.size}`,
      );
      expect(unexpected.slice(0, 5), 'creates answered other than 200').toEqual([]);
      expect(lost, 'acknowledged creates missing after the last kill').toEqual([]);
      expect(phantoms, 'plants no create asked for').toEqual([]);
      expect(killsSurvived).toBe(KILLS);
      // The plants in flight at a kill may or may not be there; those stored are whole.
      const health = await api(restarted.baseUrl).get('/api/health');
      expect(health.status, describeExchange(health)).toBe(200);
    } finally {
      await restarted.stop();
    }
    // SQLite checks its file's structure; a PostgreSQL server recovers its own files and was never killed.
    if (database.engine === 'sqlite') {
      expect(await database.query('PRAGMA integrity_check'), 'PRAGMA integrity_check').toEqual([{ integrity_check: 'ok' }]);
    }
  });
});

async function listAll(baseUrl: string, token: string): Promise<Set<bigint>> {
  const client = api(baseUrl, token);
  const ids = new Set<bigint>();
  let next: string | undefined = '/api/plants?limit=1000';
  for (let pages = 0; next !== undefined && pages < 1_000; pages++) {
    const response = await client.get(next);
    expect(response.status, describeExchange(response)).toBe(200);
    for (const plant of response.json as { id: bigint; name: string; tag?: string }[]) {
      expect(plant, 'a stored plant is whole').toEqual({ id: plant.id, name: `crash ${plant.id}`, tag: 'durable' });
      ids.add(plant.id);
    }
    next = nextLink(response);
  }
  return ids;
}
