/**
 * What hostile requests cost the server, measured on the production build (`npm run bench:costs`,
 * about a minute): each request is sent ROUNDS (20) times in a row by a member owning 50,000 plants, and
 * its cost is the server process's CPU time over those rounds (user + system, from /proc/PID/stat), which a
 * busy machine moves far less than wall time. With BASELINE_DIR=<a checkout of another commit, built into
 * its .test-build/> that commit's server is measured too, on a database of its own, for a change's figures
 * beside its parent's.
 *
 * 1. Deep and large requests: a tRPC query 2,400 levels deep, a batch of ten deep creates, a REST create with
 *    an Idempotency-Key 4,000 deep, and a 64 KiB body of unknown fields under a new key each time (what
 *    the keys keep).
 * 2. The most expensive requests left, per door, with the rate-limit units each is charged.
 *
 * SQLite only (the seed writes the file directly). Not part of the test suite.
 */
import { readFileSync } from 'node:fs';

import Database from 'better-sqlite3';

import { BODY_BYTES_PER_UNIT, BODY_LIMIT_BYTES, kib } from '@/shared/limits';
import { foldForSearch } from '@/shared/plants';

import { ensureTestBuild } from '@test-support/build';
import { type RunningServer, startServer } from '@test-support/server-process';

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const BASELINE_DIR = process.env.BASELINE_DIR;

const nest = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const list = (count: number, item: string) => Array(count).fill(item).join(',');
const batchPath = (procedure: string) => `/api/trpc/${Array(10).fill(procedure).join(',')}?batch=1`;
const batchQuery = (input: unknown) => `&input=${encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 10 }, (_, index) => [index, { json: input }]))))}`;

function unknownFields(id: string, size: number): string {
  let body = `{"id":${id},"name":"x"`;
  for (let field = 0; body.length < size - 16; field++) body += `,"f${field}":0`;
  return `${body}}`;
}

type Probe = { label: string; units: string; method?: 'GET' | 'POST'; path: string; body?: string; keyed?: boolean };

const PROBES: Probe[] = [
  { label: 'tRPC GET plants.list, q nested 2,400 deep (5 KB)', units: '1', path: `/api/trpc/plants.list?input=${encodeURIComponent(`{"json":{"q":${nest(2_400, '1')}}}`)}` },
  {
    label: 'tRPC batch of 10 creates, tags nested 2,400 deep (47 KiB)',
    units: '15',
    method: 'POST',
    path: batchPath('plants.create'),
    body: `{${Array.from({ length: 10 }, (_, index) => `"${index}":{"json":{"id":"${index + 1}","name":"x","tag":${nest(2_400, '1')}},"meta":{"values":{"id":["bigint"]}}}`).join(',')}}`,
  },
  { label: 'REST create with an Idempotency-Key, tag nested 4,000 deep', units: '1', method: 'POST', path: '/api/plants', body: `{"id":7,"name":"x","tag":${nest(4_000, '1')}}`, keyed: true },
  {
    label: `REST create with an Idempotency-Key, 6,500 unknown fields (${kib(BODY_LIMIT_BYTES)})`,
    units: String(BODY_LIMIT_BYTES / BODY_BYTES_PER_UNIT),
    method: 'POST',
    path: '/api/plants',
    body: unknownFields('7', BODY_LIMIT_BYTES),
    keyed: true,
  },
  { label: 'REST create with an Idempotency-Key, tag of 21,000 integers (42 KB)', units: '6', method: 'POST', path: '/api/plants', body: `{"id":7,"name":"x","tag":[${list(21_000, '1')}]}`, keyed: true },
  { label: 'REST list, q matching nothing, limit=1000 (scans 50k plants)', units: '20', path: '/api/plants?q=zzzz&limit=1000' },
  { label: 'REST list, limit=1000', units: '10', path: '/api/plants?limit=1000' },
  {
    label: 'tRPC plants.create, tag of 21,000 empty arrays (63 KB)',
    units: '8',
    method: 'POST',
    path: '/api/trpc/plants.create',
    body: `{"json":{"id":"7","name":"x","tag":[${list(21_000, '[]')}]},"meta":{"values":{"id":["bigint"]}}}`,
  },
  { label: 'tRPC batch of 10 table pages, q matching nothing, last page', units: '150', path: `${batchPath('plants.page')}${batchQuery({ size: 100, q: 'zzzz', cursor: { kind: 'last' } })}` },
  { label: 'tRPC batch of 10 table pages, last page', units: '50', path: `${batchPath('plants.page')}${batchQuery({ size: 100, cursor: { kind: 'last' } })}` },
  { label: 'tRPC batch of 10 lists of 1000', units: '100', path: `${batchPath('plants.list')}${batchQuery({ limit: 1000 })}` },
  {
    label: 'tRPC batch of 10 bulk deletes of 100 ids',
    units: '1,000 (the burst)',
    method: 'POST',
    path: batchPath('plants.deleteMany'),
    body: JSON.stringify(
      Object.fromEntries(
        Array.from({ length: 10 }, (_, call) => [
          call,
          {
            json: { ids: Array.from({ length: 100 }, (_, index) => String(9_000_000 + call * 100 + index)) },
            meta: { values: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`ids.${index}`, ['bigint']])) },
          },
        ]),
      ),
    ),
  },
];

/** The server process's CPU time so far, user + system, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** 50,000 plants for the member, written into the server's SQLite file directly. */
function seed(server: RunningServer, user: string): void {
  const sqlite = new Database(server.databaseUrl.slice('file:'.length));
  try {
    const { id: ownerId } = sqlite.prepare('SELECT id FROM "User" WHERE name = ?').get(user) as { id: number };
    const insert = sqlite.prepare('INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES (?, ?, ?, ?, ?, ?)');
    const createdAt = new Date().toISOString().replace('Z', '+00:00');
    sqlite.transaction(() => {
      for (let index = 1; index <= 50_000; index++) {
        const name = `Plant with a rather long name, number ${index} of the collection`;
        insert.run(BigInt(1_000_000 + index), name, foldForSearch(name), index % 10 === 0 ? 'rare' : null, ownerId, createdAt);
      }
    })();
  } finally {
    sqlite.close();
  }
}

async function measure(dir: string | undefined): Promise<Map<string, string>> {
  const server = await startServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', LOG_LEVEL: 'warn' }, ...(dir ? { dir } : {}) });
  const figures = new Map<string, string>();
  try {
    const { token } = await server.createToken('bench-costs', 'member');
    seed(server, 'bench-costs');
    let key = 0;
    for (const probe of PROBES) {
      const send = async () => {
        const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
        if (probe.body !== undefined) headers['Content-Type'] = 'application/json';
        if (probe.keyed) headers['Idempotency-Key'] = `bench-${key++}`;
        const response = await fetch(`${server.baseUrl}${probe.path}`, { method: probe.method ?? 'GET', headers, body: probe.body });
        await response.arrayBuffer();
        return response.status;
      };
      await send();
      const before = cpuMs(server.pid);
      let status = 0;
      for (let round = 0; round < ROUNDS; round++) status = await send();
      figures.set(probe.label, `${((cpuMs(server.pid) - before) / ROUNDS).toFixed(1)} ms (${status})`);
    }
    // What the keys keep: a body limit's worth of unknown fields under a new key each time, 8 at once for 5 s.
    const body = unknownFields('7', BODY_LIMIT_BYTES);
    let sent = 0;
    const until = Date.now() + 5_000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          const response = await fetch(`${server.baseUrl}/api/plants`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': `flood-${sent++}` },
            body,
          });
          await response.arrayBuffer();
        }
      }),
    );
    const [kept] = await server.database.query<{ bytes: bigint | null }>('SELECT SUM(LENGTH("response")) AS bytes FROM "IdempotencyKey"');
    figures.set(`keys kept after 8 × 5 s of ${kib(BODY_LIMIT_BYTES)} unknown-field creates, a new key each`, `${(Number(kept?.bytes ?? 0n) / 1e6).toFixed(1)} MB for ${sent} requests`);
  } finally {
    await server.stop();
  }
  return figures;
}

ensureTestBuild();
const now = await measure(undefined);
const before = BASELINE_DIR ? await measure(BASELINE_DIR) : undefined;
console.log(`| request | units | server CPU per request (status)${before ? ' | before' : ''} |`);
console.log(`|---|--:|--:|${before ? '--:|' : ''}`);
for (const [label, figure] of now) {
  const units = PROBES.find((probe) => probe.label === label)?.units ?? '';
  console.log(`| ${label} | ${units} | ${figure}${before ? ` | ${before.get(label) ?? ''}` : ''} |`);
}
