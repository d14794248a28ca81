/**
 * What the costliest calls of the router cost the server, measured as an attacker with a member token would
 * (`npm run bench:worst-calls`, a few minutes): on loopback, against a database where the member owns 40,000
 * plants, each with a tag of its own. With BASELINE_DIR=<a checkout of another commit, built into its
 * .test-build/> that commit's server is measured too, each on a database of its own, alternating request by
 * request: the figures before and after, under the same load.
 *
 * - `plants.restore` of 500 ids, after a `plants.deleteMany` of the same 500 with `keepForUndo`: the server's
 *   main-thread CPU and the wall time of the restore, and how long a `/api/health` sent meanwhile waited.
 * - `plants.tags` with the prefix `zz`: for 40,000 distinct tags (every one matches), and for 50 over 40,000 plants.
 * - MCP `tools/call plants_list` whose `q` is 64 KiB of arrays nested 24 deep, beside the same arrays on REST
 *   and tRPC.
 * - MCP `ping`, `initialize` and `tools/list` (a member's, an admin's), beside a REST list of one plant.
 *
 * Each figure is the median of ROUNDS (9) runs, with the units the server's log line says it charged (a build
 * from before that line says "not logged"). SQLite, or PostgreSQL with TEST_DATABASE=postgresql and TEST_POSTGRES_URL. Not part of the test
 * suite: its figures depend on the machine's load, printed beside them.
 */
import http from 'node:http';
import os from 'node:os';

import { ensureTestBuild } from '@test-support/build';
import { insertPlantsOf } from '@test-support/database';
import { MCP_HEADERS } from '@test-support/mcp-client';
import { mainThreadCpuMs } from '@test-support/server-cpu';
import { type RunningServer, startServer } from '@test-support/server-process';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const BASELINE_DIR = process.env.BASELINE_DIR;
const PLANTS = 40_000;
const FIRST_ID = 1_000_000;

type Answer = { status: number; text: string; requestId: string | null; ms: number };

function send(baseUrl: string, options: { path: string; token?: string; body?: string; headers?: Record<string, string> }): Promise<Answer> {
  const body = options.body === undefined ? undefined : Buffer.from(options.body);
  const startedAt = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${baseUrl}${options.path}`,
      {
        method: body ? 'POST' : 'GET',
        agent: false,
        headers: {
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
          ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}),
          ...options.headers,
        },
      },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            text: Buffer.concat(parts).toString('utf8'),
            requestId: (response.headers['x-request-id'] as string | undefined) ?? null,
            ms: performance.now() - startedAt,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A member's plants, written straight into the server's database: each with its own tag (`zz` and the number), or one of 50. */
async function seed(server: RunningServer, user: string, firstId: number, distinctTags: boolean): Promise<void> {
  await insertPlantsOf(
    server.database,
    user,
    Array.from({ length: PLANTS }, (_, index) => ({
      id: BigInt(firstId + index),
      name: `Plant number ${index} of the collection`,
      tag: distinctTags ? `zz${String(index).padStart(6, '0')}` : `zz-common-${index % 50}`,
    })),
  );
}

/** A superjson input whose `at` is a list of int64 ids. */
function withIds(json: Record<string, unknown>, at: string, ids: bigint[]): string {
  const values = Object.fromEntries(ids.map((_, index) => [`${at}.${index}`, ['bigint']]));
  const list = ids.map(String);
  const filled = at === 'ids' ? { ...json, ids: list } : { ...json, selection: { kind: 'ids', ids: list } };
  return JSON.stringify({ json: filled, meta: { values } });
}

/** 64 KiB of arrays, each nested 24 deep, side by side. */
function nestedArrays(room: number): string {
  const one = `${'['.repeat(24)}${']'.repeat(24)}`;
  return `[${Array(Math.floor((64 * 1024 - room) / (one.length + 1))).fill(one).join(',')}]`;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type Side = { label: string; server: RunningServer; member: string; fewTags: string; round: number };

async function startSide(label: string, dir: string | undefined): Promise<Side> {
  const server = await startServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', LOG_LEVEL: 'info' }, ...(dir ? { dir } : {}) });
  const member = (await server.createToken('worst-member', 'member')).token;
  const fewTags = (await server.createToken('worst-few-tags', 'member')).token;
  await seed(server, 'worst-member', FIRST_ID, true);
  await seed(server, 'worst-few-tags', FIRST_ID + PLANTS, false);
  return { label, server, member, fewTags, round: 0 };
}

/** The units a server's log line says it charged the request, when it logs them. */
function loggedUnits(side: Side, requestId: string | null): string {
  const line = side.server
    .log()
    .split('\n')
    .find((text) => requestId !== null && text.includes(`"requestId":"${requestId}"`) && text.includes('"msg":"request"'));
  const units = line ? (JSON.parse(line) as { units?: number }).units : undefined;
  return units === undefined ? 'not logged' : `${units} units`;
}

type Probe = { name: string; run: (side: Side) => Promise<{ cpu: number; wall?: number; health?: number; answer: Answer }> };

/** One request, its server CPU. */
const plain = (name: string, request: (side: Side) => Parameters<typeof send>[1]): Probe => ({
  name,
  run: async (side) => {
    const before = mainThreadCpuMs(side.server.pid);
    const answer = await send(side.server.baseUrl, request(side));
    return { cpu: mainThreadCpuMs(side.server.pid) - before, answer };
  },
});

const mcp = (body: string) => (token: string) => ({ path: '/api/mcp', token, body, headers: MCP_HEADERS });
const arrays = nestedArrays(200);

const PROBES: Probe[] = [
  {
    name: 'plants.restore of 500 ids just deleted (tRPC)',
    run: async (side) => {
      const first = FIRST_ID + side.round++ * 500;
      const ids = Array.from({ length: 500 }, (_, index) => BigInt(first + index));
      const trpc = (path: string, body: string) => send(side.server.baseUrl, { path: `/api/trpc/${path}`, token: side.member, body });
      const deleted = await trpc('plants.deleteMany', withIds({ keepForUndo: true }, 'selection.ids', ids));
      if (deleted.status !== 200) throw new Error(`deleteMany answered ${deleted.status}: ${deleted.text.slice(0, 300)}`);
      const before = mainThreadCpuMs(side.server.pid);
      const restoring = trpc('plants.restore', withIds({}, 'ids', ids));
      // A request that never touches the database, sent while the restore runs.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const health = await send(side.server.baseUrl, { path: '/api/health' });
      const answer = await restoring;
      return { cpu: mainThreadCpuMs(side.server.pid) - before, wall: answer.ms, health: health.ms, answer };
    },
  },
  plain('plants.tags prefix zz, 40,000 distinct tags (tRPC)', (side) => ({ path: `/api/trpc/plants.tags?input=${encodeURIComponent('{"json":{"prefix":"zz"}}')}`, token: side.member })),
  plain('plants.tags prefix zz, 50 tags over 40,000 plants (tRPC)', (side) => ({ path: `/api/trpc/plants.tags?input=${encodeURIComponent('{"json":{"prefix":"zz"}}')}`, token: side.fewTags })),
  plain('MCP tools/call plants_list, q of 64 KiB of arrays nested 24 deep', (side) =>
    mcp(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plants_list","arguments":{"q":${arrays}}}}`)(side.member),
  ),
  plain('tRPC plants.create, tag of the same arrays', (side) => ({ path: '/api/trpc/plants.create', token: side.member, body: `{"json":{"id":"1","name":"x","tag":${arrays}},"meta":{"values":{"id":["bigint"]}}}` })),
  plain('REST POST /api/plants, name of the same arrays', (side) => ({ path: '/api/plants', token: side.member, body: `{"id":1,"name":${arrays}}` })),
  plain('MCP ping', (side) => mcp('{"jsonrpc":"2.0","id":1,"method":"ping"}')(side.member)),
  plain('MCP initialize', (side) =>
    mcp('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')(side.member),
  ),
  plain('MCP tools/list, member', (side) => mcp('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')(side.member)),
  plain('MCP tools/list, admin', (side) => mcp('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')(side.server.adminToken)),
  plain('REST GET /api/plants?limit=1', (side) => ({ path: `/api/plants?limit=1&after=${side.round++}`, token: side.member })),
];

ensureTestBuild();
const loadBefore = os.loadavg();
const sides = [await startSide('this commit', undefined), ...(BASELINE_DIR ? [await startSide(BASELINE_DIR, BASELINE_DIR)] : [])];
const rows: string[] = [];
try {
  for (const probe of PROBES) {
    const figures = new Map(sides.map((side) => [side, { cpu: [] as number[], wall: [] as number[], health: [] as number[], last: undefined as Answer | undefined }]));
    // Once unmeasured on each, then alternating: the machine's load falls on both alike.
    for (const side of sides) await probe.run(side);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        const { cpu, wall, health, answer } = await probe.run(side);
        const figure = figures.get(side)!;
        figure.cpu.push(cpu);
        if (wall !== undefined) figure.wall.push(wall);
        if (health !== undefined) figure.health.push(health);
        figure.last = answer;
      }
    }
    for (const side of sides) {
      const { cpu, wall, health, last } = figures.get(side)!;
      const error = /"error":\{"code":(-?\d+)/.exec(last!.text)?.[1] ?? /\\?"error\\?":\s*(\d+)/.exec(last!.text)?.[1];
      const extra = [wall.length ? `wall ${median(wall).toFixed(0)} ms` : '', health.length ? `a /api/health meanwhile waited ${median(health).toFixed(0)} ms` : '']
        .filter(Boolean)
        .join(', ');
      rows.push(
        `| ${probe.name} | ${side.label} | ${median(cpu).toFixed(2)} ms | ${loggedUnits(side, last!.requestId)} | ${last!.status}${error ? ` (${error})` : ''}, ${(Buffer.byteLength(last!.text) / 1024).toFixed(1)} KiB${extra ? `; ${extra}` : ''} |`,
      );
    }
  }
} finally {
  await Promise.all(sides.map((side) => side.server.stop()));
}
console.log(`load average before ${loadBefore.map((load) => load.toFixed(2)).join(' ')}, after ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
console.log('| request | server | main-thread CPU (median) | charged | answer |');
console.log('|---|---|--:|--:|---|');
for (const row of rows) console.log(row);
