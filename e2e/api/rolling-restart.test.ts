/**
 * A rolling restart behind a real load balancer: HAProxy (Debian's `haproxy`), configured exactly as
 * docs/scaling.md says (the configuration is read from that page, so the two cannot drift), in front of two
 * instances on one PostgreSQL. Six clients list and six create through it, each on its own kept-alive
 * connection, while each instance in turn is sent SIGTERM and started again on its address: not one request
 * may fail, and every create that was answered 200 must be stored.
 *
 * Runs in the PostgreSQL pass of the suite. Without haproxy it is skipped with a message, except in CI
 * (CI=true), where .ci/run installs it and a missing haproxy fails the run.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { freePort } from '@test-support/processes';
import { projectRoot, type RunningServer, startServer } from '@test-support/server-process';

const haproxyFound = spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
if (!haproxyFound && process.env.CI === 'true') throw new Error('haproxy is not installed: .ci/run installs Debian\'s haproxy for this test');
const runs = haproxyFound && testEngine === 'postgresql';
if (!runs) {
  console.log(
    `[rolling-restart] skipped: ${testEngine !== 'postgresql' ? 'it runs in the PostgreSQL pass (TEST_DATABASE=postgresql)' : 'haproxy is not installed (apt-get install haproxy)'}`,
  );
}

const LISTING_CLIENTS = 6;
const CREATING_CLIENTS = 6;
/** Load before the first restart and after the last, so each phase sees both instances serving. */
const STEADY_MS = 1_000;

/** The configuration docs/scaling.md gives: its one ```haproxy block. */
function documentedConfiguration(): string {
  const page = readFileSync(path.join(projectRoot, 'docs', 'scaling.md'), 'utf8');
  const blocks = [...page.matchAll(/^```haproxy\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) throw new Error(`docs/scaling.md should hold exactly one \`\`\`haproxy block, not ${blocks.length}`);
  return blocks[0]![1]!;
}

type Haproxy = { process: ChildProcess; output: () => string; statusOf: () => Promise<Record<string, string>>; stop: () => void };

/** The documented configuration, plus a second file with the runtime socket the test reads server states from. */
async function startHaproxy(listen: string, instances: [string, string]): Promise<Haproxy> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-haproxy-'));
  const socket = path.join(dir, 'haproxy.sock');
  writeFileSync(path.join(dir, 'plant-store.cfg'), documentedConfiguration());
  writeFileSync(path.join(dir, 'test-socket.cfg'), `global\n    stats socket ${socket} mode 600 level admin\n`);
  const child = spawn('haproxy', ['-db', '-f', path.join(dir, 'plant-store.cfg'), '-f', path.join(dir, 'test-socket.cfg')], {
    env: { ...process.env, LISTEN: listen, INSTANCE_1: instances[0], INSTANCE_2: instances[1] },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  /** HAProxy's view of each server of the backend: UP, DOWN, or on its way ("UP 1/2", "DOWN 1/2"). */
  const statusOf = () =>
    new Promise<Record<string, string>>((resolve, reject) => {
      const connection = net.createConnection(socket);
      let csv = '';
      connection.setEncoding('utf8').on('data', (chunk: string) => (csv += chunk));
      connection.on('error', reject);
      connection.on('end', () => {
        const [header, ...rows] = csv.trim().split('\n');
        const columns = (header ?? '').replace(/^# /, '').split(',');
        const at = (name: string) => columns.indexOf(name);
        const servers = rows.map((row) => row.split(',')).filter((fields) => fields[at('pxname')] === 'instances' && fields[at('svname')] !== 'BACKEND');
        resolve(Object.fromEntries(servers.map((fields) => [fields[at('svname')]!, fields[at('status')]!])));
      });
      connection.end('show stat\n');
    });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  };
  return { process: child, output: () => output, statusOf, stop };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs / 1000} s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type Outcome = { ok: true } | { ok: false; what: string };

/** One request on the agent's kept-alive connections, never retried: any error or unexpected status is a failure. */
function send(agent: http.Agent, url: string, method: 'GET' | 'POST', token: string, body?: string): Promise<{ status: number; outcome: Outcome }> {
  return new Promise((resolve) => {
    const request = http.request(
      url,
      { method, agent, timeout: 30_000, headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          resolve({ status, outcome: status === 200 ? { ok: true } : { ok: false, what: `${method} ${status} ${text.slice(0, 200)}` } });
        });
        response.on('error', (error) => resolve({ status: 0, outcome: { ok: false, what: `${method} cut mid-answer: ${error.message}` } }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('no answer within 30 s')));
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, outcome: { ok: false, what: `${method} ${error.code ?? ''} ${error.message}` } }));
    request.end(body);
  });
}

describe.runIf(runs)('a rolling restart behind HAProxy', () => {
  let database: TestDatabase;
  const instances: RunningServer[] = [];
  let haproxy: Haproxy;
  let adminToken: string;
  let listen: string;
  const failures: string[] = [];
  const acknowledged: bigint[] = [];
  let answered = 0;
  const restarts: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    // The balancer is on loopback, so the instances believe its X-Forwarded-For (and do not count its
    // connections as one client's). The drain window is the default, as documented.
    const env = { TRUST_PROXY: 'loopback', RATE_LIMIT_PER_TOKEN: 'off', SHUTDOWN_DRAIN_MS: '5000' };
    const first = await startServer({ database, env });
    instances.push(first, await startServer({ database, env }));
    adminToken = first.adminToken;
    listen = `127.0.0.1:${await freePort()}`;
    haproxy = await startHaproxy(listen, [instances[0]!.baseUrl.replace('http://', ''), instances[1]!.baseUrl.replace('http://', '')]);
    await until('HAProxy sees both instances up', async () => Object.values(await haproxy.statusOf()).join() === 'UP,UP', 30_000);

    let running = true;
    let nextId = 1n;
    const loop = async (kind: 'list' | 'create') => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      while (running) {
        const id = nextId++;
        const { outcome } =
          kind === 'list'
            ? await send(agent, `http://${listen}/api/plants?limit=20`, 'GET', adminToken)
            : await send(agent, `http://${listen}/api/plants`, 'POST', adminToken, plantBody(id, `rolling ${id}`));
        answered++;
        if (!outcome.ok) failures.push(outcome.what);
        else if (kind === 'create') acknowledged.push(id);
      }
      agent.destroy();
    };
    const loops = [...Array.from({ length: LISTING_CLIENTS }, () => loop('list')), ...Array.from({ length: CREATING_CLIENTS }, () => loop('create'))];

    await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
    for (const index of [0, 1]) {
      const old = instances[index]!;
      const name = index === 0 ? 'one' : 'two';
      const termAt = Date.now();
      old.kill('SIGTERM');
      await until(`HAProxy takes instance ${name} out while it drains`, async () => (await haproxy.statusOf())[name] === 'DOWN', 10_000);
      const downAfter = Date.now() - termAt;
      const exit = await old.exit;
      const exitedAfter = Date.now() - termAt;
      expect(exit, `instance ${name} exits 0`).toEqual({ code: 0, signal: null });
      instances[index] = await startServer({ database, env, port: Number(new URL(old.baseUrl).port) });
      await until(`HAProxy puts instance ${name} back`, async () => (await haproxy.statusOf())[name] === 'UP', 30_000);
      restarts.push(`${name}: out of rotation ${downAfter} ms after SIGTERM, exited after ${exitedAfter} ms, back after ${Date.now() - termAt} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, STEADY_MS));
    running = false;
    await Promise.all(loops);
    console.log(`[rolling-restart] ${answered} requests through HAProxy, ${failures.length} failed, ${acknowledged.length} creates acknowledged; ${restarts.join('; ')}`);
  }, 240_000);

  afterAll(async () => {
    haproxy?.stop();
    await Promise.all(instances.map((instance) => instance.stop()));
    await database?.drop();
  });

  it('fails no request while each instance is restarted in turn', () => {
    expect(answered).toBeGreaterThan(100);
    expect(failures.slice(0, 10), `${failures.length} failed requests; HAProxy said:\n${haproxy.output().slice(-2_000)}`).toEqual([]);
  });

  it('keeps every acknowledged create', async () => {
    const stored = new Set((await database.query<{ id: bigint }>('SELECT id FROM "Plant"')).map((row) => row.id));
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost.slice(0, 10), `${lost.length} of ${acknowledged.length} acknowledged creates are missing`).toEqual([]);
  });
});
