/**
 * Graceful shutdown: on SIGTERM the server stops taking connections, answers every request it accepted in
 * full, and exits with code 0 within its drain time (10 s; the test allows 12). A client may meet a refused
 * connection once the shutdown started; it must never meet a reset in the middle of an answer, a 5xx, or a
 * request the server acted on without answering.
 *
 * "Accepted" is read from the server's own log: the edge logs one line per REST request with its request
 * id, which is also the response's X-Request-Id. Every logged request id must have reached a client.
 *
 * `startServer` runs the test build's server.mjs in the process it spawns, so the pid signalled and whose
 * exit code is read is the server's own.
 */
import http from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { nextLink, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { api, describeExchange, rawRequest } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';
import { errorCatalog } from '@/shared/errors';

const KEEP_ALIVE_LOOPS = 16;
const NEW_CONNECTION_LOOPS = 16;
const LOAD_BEFORE_TERM_MS = 1_000;
const EXIT_WITHIN_MS = 12_000;

type Outcome =
  | { kind: 'answered'; status: number; requestId: string | undefined; text: string; endedAt: number }
  | { kind: 'refused' }
  | { kind: 'reset before any answer'; error: string }
  | { kind: 'reset mid-answer'; error: string; status: number }
  | { kind: 'timeout' };

type Attempt = { id: bigint; connection: 'keep-alive' | 'new'; sentAt: number; outcome: Outcome };

/**
 * A create, classified by how far the answer got. `chunks` are written with the given pauses between
 * them (a slow client); the connection is `agent`'s (keep-alive) or a new one.
 */
function sendCreate(
  baseUrl: string,
  token: string,
  id: bigint,
  agent: http.Agent | false,
  pausesMs: number[] = [],
  /** Sends `Expect: 100-continue` and calls this when the server's 100 shows it has read the headers. */
  onHeadersRead?: () => void,
): Promise<Outcome> {
  const body = Buffer.from(plantBody(id, `drain ${id}`));
  const cuts = pausesMs.length === 0 ? [body.length] : [Math.floor(body.length / 2), body.length];
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (!settled) resolve(outcome);
      settled = true;
    };
    let gotResponse: number | undefined;
    const request = http.request(
      `${baseUrl}/api/plants`,
      {
        method: 'POST',
        agent,
        timeout: 20_000,
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          'Content-Length': body.length,
          ...(onHeadersRead ? { Expect: '100-continue' } : {}),
        },
      },
      (response) => {
        gotResponse = response.statusCode ?? 0;
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          if (!response.complete) return settle({ kind: 'reset mid-answer', error: 'incomplete body', status: gotResponse! });
          const requestId = response.headers['x-request-id'];
          settle({ kind: 'answered', status: gotResponse!, requestId: typeof requestId === 'string' ? requestId : undefined, text, endedAt: Date.now() });
        });
        response.on('aborted', () => settle({ kind: 'reset mid-answer', error: 'aborted', status: gotResponse! }));
        response.on('error', (error) => settle({ kind: 'reset mid-answer', error: error.message, status: gotResponse! }));
      },
    );
    request.on('timeout', () => {
      settle({ kind: 'timeout' });
      request.destroy();
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (gotResponse !== undefined) settle({ kind: 'reset mid-answer', error: error.message, status: gotResponse });
      else if (error.code === 'ECONNREFUSED') settle({ kind: 'refused' });
      else settle({ kind: 'reset before any answer', error: `${error.code ?? ''} ${error.message}` });
    });
    let offset = 0;
    const writeNext = (index: number) => {
      if (request.destroyed) return;
      const end = cuts[index]!;
      const piece = body.subarray(offset, end);
      offset = end;
      if (index === cuts.length - 1) request.end(piece);
      else {
        request.write(piece);
        setTimeout(() => writeNext(index + 1), pausesMs[index]);
      }
    };
    if (onHeadersRead) {
      request.flushHeaders();
      request.once('continue', () => {
        writeNext(0);
        onHeadersRead();
      });
    } else writeNext(0);
  });
}

type Scenario = {
  attempts: Attempt[];
  slow: Outcome;
  exitCode: number | null;
  exitSignal: NodeJS.Signals | null;
  exitAfterMs: number;
  termSentAt: number;
  log: string;
  database: TestDatabase;
  adminToken: string;
};

const SLOW_PAUSE_MS = 2_000;
let scenario: Scenario;
let running: RunningServer | undefined;
let database: TestDatabase | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
  // The rate limit is off: this is about the drain, at full speed. No drain window: the SIGTERM stops accepting at once.
  const server = await startServer({ database, env: { RATE_LIMIT_PER_TOKEN: 'off', SHUTDOWN_DRAIN_MS: '0' } });
  running = server;
  const { baseUrl, adminToken } = server;
  const exit = server.exit.then((result) => ({ ...result, at: Date.now() }));

  const attempts: Attempt[] = [];
  let nextId = 1n;
  let exited = false;
  void exit.then(() => (exited = true));
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: KEEP_ALIVE_LOOPS });
  let termSentAt = Number.POSITIVE_INFINITY;
  const loop = async (connection: Attempt['connection']) => {
    // Bounded: a loop ends at its first refused connection, once the server is gone, or after 30 s.
    const stopAt = Date.now() + 30_000;
    while (Date.now() < stopAt && !exited) {
      const id = nextId++;
      const sentAt = Date.now();
      const outcome = await sendCreate(baseUrl, adminToken, id, connection === 'keep-alive' ? keepAlive : false);
      attempts.push({ id, connection, sentAt, outcome });
      if (outcome.kind === 'refused') break;
      if (outcome.kind !== 'answered' && sentAt > termSentAt) break;
    }
  };
  const loops = [
    ...Array.from({ length: KEEP_ALIVE_LOOPS }, () => loop('keep-alive')),
    ...Array.from({ length: NEW_CONNECTION_LOOPS }, () => loop('new')),
  ];
  await new Promise((resolve) => setTimeout(resolve, LOAD_BEFORE_TERM_MS));
  // A slow client: once the server has read its headers (its 100 Continue says so), half the body; the
  // rest two seconds after the SIGTERM.
  let headersRead!: () => void;
  const slowStarted = new Promise<void>((resolve) => (headersRead = resolve));
  const slow = sendCreate(baseUrl, adminToken, 1_000_000_000n, false, [SLOW_PAUSE_MS + 300], headersRead);
  // However long a busy machine takes to read its headers: the SIGTERM must find it in flight. (A slow request
  // that fails before its 100 Continue ends the wait too, and its outcome fails the test below.)
  await Promise.race([slowStarted, slow]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  termSentAt = Date.now();
  server.kill('SIGTERM');
  const exitedWith = await Promise.race([exit, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000))]);
  if (exitedWith === null) server.kill('SIGKILL');
  await Promise.all(loops);
  keepAlive.destroy();
  scenario = {
    attempts,
    slow: await slow,
    exitCode: exitedWith?.code ?? null,
    exitSignal: exitedWith?.signal ?? null,
    exitAfterMs: exitedWith ? exitedWith.at - termSentAt : Number.POSITIVE_INFINITY,
    termSentAt,
    log: server.log(),
    database,
    adminToken,
  };
  const counts = new Map<string, number>();
  for (const { outcome, connection } of attempts) {
    const key = outcome.kind === 'answered' ? `answered ${outcome.status}` : `${outcome.kind} (${connection})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const answeredAfterTerm = attempts.filter(({ outcome }) => outcome.kind === 'answered' && outcome.endedAt >= termSentAt).length;
  console.log(
    `[shutdown] ${attempts.length} creates fired: ${[...counts].map(([key, value]) => `${value} ${key}`).join(', ')}; ` +
      `${answeredAfterTerm} answered after the SIGTERM; slow request: ${scenario.slow.kind}${scenario.slow.kind === 'answered' ? ` ${scenario.slow.status}` : ''}; ` +
      `exit code ${scenario.exitCode} (signal ${scenario.exitSignal}) ${scenario.exitAfterMs} ms after the SIGTERM`,
  );
}, 120_000);

afterAll(async () => {
  if (running && !running.exited()) running.kill('SIGKILL');
  await database?.drop();
});

/** The REST request lines of the server's log: one JSON object per request. */
function loggedRequests(log: string): { requestId: string; method: string; path: string; status: number }[] {
  return log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((entry) => entry.msg === 'request' && typeof entry.requestId === 'string')
    .map((entry) => entry as { requestId: string; method: string; path: string; status: number });
}

describe('SIGTERM with requests in flight', () => {
  it(`exits with code 0 within ${EXIT_WITHIN_MS / 1000} s`, () => {
    expect(scenario.log, 'the server says it is draining').toContain('SIGTERM: finishing the requests in flight');
    expect({ code: scenario.exitCode, signal: scenario.exitSignal }).toEqual({ code: 0, signal: null });
    expect(scenario.exitAfterMs).toBeLessThan(EXIT_WITHIN_MS);
  });

  it('had requests in flight when the SIGTERM came, and answered them', () => {
    const answeredAfterTerm = scenario.attempts.filter(({ outcome }) => outcome.kind === 'answered' && outcome.endedAt >= scenario.termSentAt);
    expect(answeredAfterTerm.length).toBeGreaterThan(0);
  });

  it('answers a slow request that was still sending its body at the SIGTERM, before it exits', () => {
    expect(scenario.slow).toMatchObject({ kind: 'answered', status: 200 });
    // Its body ended about SLOW_PAUSE_MS after the SIGTERM: the server waited for it, then exited.
    if (scenario.slow.kind === 'answered') expect(scenario.slow.endedAt - scenario.termSentAt).toBeGreaterThanOrEqual(SLOW_PAUSE_MS - 500);
    expect(scenario.exitAfterMs).toBeGreaterThanOrEqual(SLOW_PAUSE_MS - 500);
  });

  it('never resets an answer midway, never times out, never answers 5xx', () => {
    const broken = scenario.attempts.filter(({ outcome }) => outcome.kind === 'reset mid-answer' || outcome.kind === 'timeout');
    expect(broken.slice(0, 5), `${broken.length} answers cut or never finished`).toEqual([]);
    const failed = scenario.attempts.filter(({ outcome }) => outcome.kind === 'answered' && outcome.status >= 500);
    expect(failed.slice(0, 5), `${failed.length} 5xx answers`).toEqual([]);
    const other = scenario.attempts.filter(({ outcome }) => outcome.kind === 'answered' && outcome.status !== 200);
    expect(other.slice(0, 5), 'creates of new ids answered other than 200').toEqual([]);
  });

  it('answers every request it accepted: each request id in its log reached the client', () => {
    const received = new Set(
      scenario.attempts.flatMap(({ outcome }) => (outcome.kind === 'answered' && outcome.requestId ? [outcome.requestId] : [])),
    );
    if (scenario.slow.kind === 'answered' && scenario.slow.requestId) received.add(scenario.slow.requestId);
    const creates = loggedRequests(scenario.log).filter((entry) => entry.method === 'POST' && entry.path === '/api/plants');
    expect(creates.length, 'create lines in the log').toBeGreaterThan(0);
    const unanswered = creates.filter((entry) => !received.has(entry.requestId));
    const cut = scenario.attempts.filter(({ outcome }) => outcome.kind === 'reset before any answer');
    expect(
      unanswered.slice(0, 5),
      `${unanswered.length} requests the server handled (logged) never reached their client; ` +
        `${cut.length} requests were cut before any answer (${cut.filter((attempt) => attempt.connection === 'keep-alive').length} on keep-alive connections), ` +
        `e.g. ${JSON.stringify(cut.slice(0, 3).map(({ connection, sentAt, outcome }) => ({ connection, msAfterTerm: sentAt - scenario.termSentAt, outcome })), (_, value) => (typeof value === 'bigint' ? String(value) : value))}`,
    ).toEqual([]);
  });

  it('keeps every acknowledged create after a restart, and stores nothing it did not answer', { timeout: 90_000 }, async () => {
    const restarted = await startServer({ database: scenario.database });
    try {
      const client = api(restarted.baseUrl, scenario.adminToken);
      const listed = new Set<bigint>();
      let next: string | undefined = '/api/plants?limit=1000';
      for (let pages = 0; next !== undefined && pages < 1_000; pages++) {
        const response = await client.get(next);
        expect(response.status, describeExchange(response)).toBe(200);
        for (const plant of response.json as { id: bigint }[]) listed.add(plant.id);
        next = nextLink(response);
      }
      const acknowledged = scenario.attempts.filter(({ outcome }) => outcome.kind === 'answered' && outcome.status === 200).map(({ id }) => id);
      const lost = acknowledged.filter((id) => !listed.has(id));
      console.log(`[shutdown] after restart: ${acknowledged.length} acknowledged creates, ${lost.length} lost, ${listed.size} plants listed`);
      expect(lost, 'acknowledged creates missing after the restart').toEqual([]);
      if (scenario.slow.kind === 'answered' && scenario.slow.status === 200) expect(listed.has(1_000_000_000n)).toBe(true);
      // A request cut before any answer must not have been carried out: the client could not know it was.
      const cutButStored = scenario.attempts.filter(({ id, outcome }) => outcome.kind === 'reset before any answer' && listed.has(id)).map(({ id }) => id);
      expect(cutButStored, 'creates carried out whose answer never reached the client').toEqual([]);
    } finally {
      await restarted.stop();
    }
  });
});

describe('SIGTERM with a drain window (SHUTDOWN_DRAIN_MS)', () => {
  const WINDOW_MS = 2_000;

  it('answers /api/health 503 (draining) and still serves every request, each closing its connection; then stops accepting and exits 0', async () => {
    const server = await startServer({ env: { SHUTDOWN_DRAIN_MS: String(WINDOW_MS), RATE_LIMIT_PER_TOKEN: 'off' } });
    try {
      const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const list = () => rawRequest(server.baseUrl, { method: 'GET', path: '/api/plants', headers: { Authorization: `Bearer ${server.adminToken}` }, agent: keepAlive });
      // A kept-alive connection before the SIGTERM stays open after its answer.
      expect((await list()).headers.get('connection')).toBe('keep-alive');
      // An open live feed: it has no end of its own, so the shutdown ends it once the window is over.
      const feed = await fetch(`${server.baseUrl}/api/trpc/plants.changes`, { headers: { authorization: `Bearer ${server.adminToken}`, accept: 'text/event-stream' } });
      expect(feed.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const feedEnded = feed.text().then(
        () => Date.now(),
        () => Date.now(),
      );
      const termAt = Date.now();
      server.kill('SIGTERM');
      await eventuallyTrue(async () => (await rawRequest(server.baseUrl, { method: 'GET', path: '/api/health' })).status === 503, 5_000);
      const health = await rawRequest(server.baseUrl, { method: 'GET', path: '/api/health' });
      expect({ status: health.status, json: health.json }).toEqual({ status: 503, json: { error: BigInt(errorCatalog.draining.value), message: 'this instance is shutting down: send new requests to another one' } });
      // Still serving, on the connection it had and on new ones, and each answer closes its connection.
      for (const answer of [await list(), await list(), await rawRequest(server.baseUrl, { method: 'GET', path: '/api/plants', headers: { Authorization: `Bearer ${server.adminToken}` } })]) {
        expect(answer.status).toBe(200);
        expect(answer.headers.get('connection')).toBe('close');
      }
      const exit = await server.exit;
      expect(exit).toEqual({ code: 0, signal: null });
      const exitedAfter = Date.now() - termAt;
      expect(exitedAfter).toBeGreaterThanOrEqual(WINDOW_MS);
      // The feed ended when the window did, not when the 10 s for requests in flight ran out.
      expect((await feedEnded) - termAt).toBeLessThan(WINDOW_MS + 5_000);
      expect(exitedAfter).toBeLessThan(WINDOW_MS + 5_000);
      await expect(rawRequest(server.baseUrl, { method: 'GET', path: '/api/health' })).rejects.toThrow(/ECONNREFUSED/);
      keepAlive.destroy();
    } finally {
      await server.stop();
    }
  });
});

async function eventuallyTrue(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
