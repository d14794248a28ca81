/**
 * The bench's create (bench/lib/load.ts: POST /api/plants, `{"id":…,"name":"Bench plant …","tag":"bench"}`) on two
 * builds, each on a database of its own, in alternating rounds (A B | B A …). For a change whose cost is in the
 * migrations (triggers): `npm run bench -- --baseline` runs both apps on one database, which the newer one migrates.
 *
 *   npx tsx bench/create-ab.ts --a=<build dir> --b=<build dir> [--rounds=6] [--seconds=5] [--connections=8]
 *
 * A build dir holds server.mjs and token.mjs (`BUILD_DIR=dist npm run build` in a checkout: its dist/). Prints
 * each round's req/s and server CPU per create, and the rounds' mean and range of B against A.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

import { measure, type Measurement } from './lib/load';
import { childEnv, freePort, type Server, startProcess, waitFor200 } from './lib/proc';
import { BENCH_RATE_LIMIT } from './lib/servers';

const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=').slice(1).join('=');
const ROUNDS = Number(option('rounds') ?? 6);
const SECONDS = Number(option('seconds') ?? 5);
const CONNECTIONS = Number(option('connections') ?? 8);
const builds = { A: option('a'), B: option('b') };
if (!builds.A || !builds.B) throw new Error('usage: npx tsx bench/create-ab.ts --a=<build dir> --b=<build dir>');

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-create-ab-'));
type Side = { label: 'A' | 'B'; server: Server; token: string; next: bigint };

async function start(label: 'A' | 'B', build: string): Promise<Side> {
  const databaseUrl = `file:${path.join(scratch, `${label}.db`)}`;
  const port = await freePort();
  const server = startProcess({
    name: label,
    command: process.execPath,
    args: [path.join(build, 'server.mjs')],
    env: { PORT: String(port), HOSTNAME_TO_BIND: '127.0.0.1', DATABASE_URL: databaseUrl, RATE_LIMIT_PER_TOKEN: BENCH_RATE_LIMIT },
    port,
  });
  await waitFor200(server, '/api/health', performance.now());
  const made = spawnSync(process.execPath, [path.join(build, 'token.mjs'), 'create', '--user', 'bench', '--role', 'member'], { env: childEnv({ DATABASE_URL: databaseUrl }), encoding: 'utf8' });
  const token = made.stdout.trimEnd().split('\n').at(-1)!.trim();
  return { label, server, token, next: 1_000_000n };
}

const sides = [await start('A', builds.A), await start('B', builds.B)];
const rounds: Record<'A' | 'B', Measurement[]> = { A: [], B: [] };
try {
  // A warm-up each, not counted.
  for (const side of sides) await measure({ server: side.server, workload: 'create', token: side.token, seconds: 2, connections: CONNECTIONS, nextCreateId: () => side.next++ });
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const result = await measure({ server: side.server, workload: 'create', token: side.token, seconds: SECONDS, connections: CONNECTIONS, nextCreateId: () => side.next++ });
      if (result.unexpected > 0 || result.status5xx > 0) throw new Error(`${side.label}: ${JSON.stringify(result.statusCounts)}`);
      rounds[side.label].push(result);
      console.log(`round ${round + 1} ${side.label}: ${result.reqPerSec.toFixed(0)} req/s, ${(result.cpuMsPer1k).toFixed(1)} µs CPU per create, others ${result.otherCpu.toFixed(2)} cores`);
    }
  }
} finally {
  for (const side of sides) await side.server.stop();
  fs.rmSync(scratch, { recursive: true, force: true });
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const ratios = (pick: (m: Measurement) => number) => rounds.B.map((b, index) => pick(b) / pick(rounds.A[index]!));
const spread = (values: number[]) => `${mean(values).toFixed(3)} (rounds ${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)})`;
console.log(`A ${builds.A}: ${mean(rounds.A.map((m) => m.reqPerSec)).toFixed(0)} req/s, ${mean(rounds.A.map((m) => m.cpuMsPer1k)).toFixed(1)} µs CPU per create`);
console.log(`B ${builds.B}: ${mean(rounds.B.map((m) => m.reqPerSec)).toFixed(0)} req/s, ${mean(rounds.B.map((m) => m.cpuMsPer1k)).toFixed(1)} µs CPU per create`);
console.log(`B/A req/s ${spread(ratios((m) => m.reqPerSec))}; CPU per create ${spread(ratios((m) => m.cpuMsPer1k))}; ${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections; load ${os.loadavg().map((load) => load.toFixed(1)).join(' ')}`);
