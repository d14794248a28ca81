/** What every phase of the bench shares: the servers, the database, the token, the record of the run. */
import os from 'node:os';

import type { Checkout } from './build';
import { type BenchDb, CREATE_BASE, DELETE_BASE } from './data';
import { type Measurement, measure, type Workload } from './load';
import type { Options } from './options';
import type { Server } from './proc';
import { fixed, int, mb } from './report';

/** `slot`: the A/B table's row it was measured for (the workload, or `list304` for a floor's plain list beside the app's 304s). */
export type RunRecord = Measurement & { round: number; load1: number; slot?: string };

export type Context = {
  options: Options;
  checkout: Checkout;
  baselines: Checkout[];
  dir: string;
  databaseUrl: string;
  data: BenchDb;
  token: string;
  memberId: number;
  /** First start of the app on the empty database (migrations, first admin), ms to /api/health. */
  firstStartMs: number;
  app: Server;
  /** The baselines' apps: `base`, or `base1`, `base2`, … with several. */
  bases: Server[];
  /** SQLite only: the floor (bare node:http + better-sqlite3) and the stack floor (tRPC + zod + Prisma, minimal). */
  floor: Server | null;
  stack: Server | null;
  scripts: { floor: string; stackFloor: string; ceiling: string; probe: string };
  running: Set<Server>;
  failures: string[];
  results: Record<string, unknown>;
  report: string[];
  nextCreateId: () => bigint;
  /** One measurement; delete gets a fresh pool of the member's plants, sized from the best rate seen so far. */
  run: (server: Server, workload: Workload, seconds: number, round: number, query?: string) => Promise<RunRecord>;
  /** Records a failure for 5xx, unexpected statuses, errors and an exhausted delete pool. */
  check: (record: RunRecord, phase: string) => void;
  line: (record: RunRecord, label: string) => void;
};

export function makeRunner(options: Options, data: BenchDb, memberId: number, token: string, failures: string[]) {
  const bestRate = new Map<string, number>();
  let poolRun = 0n;
  let createCounter = 0n;
  const nextCreateId = () => CREATE_BASE + createCounter++;

  const run = async (server: Server, workload: Workload, seconds: number, round: number, query = 'limit=20'): Promise<RunRecord> => {
    let pool: bigint[] | undefined;
    let poolFrom = 0n;
    if (workload === 'delete') {
      const size = Math.ceil((bestRate.get(`${server.name} delete`) ?? 10_000) * seconds * 3) + 5_000;
      poolFrom = DELETE_BASE + poolRun++ * 2n ** 32n;
      pool = Array.from({ length: size }, (_, i) => poolFrom + BigInt(i));
      await data.insertRange(memberId, poolFrom, size);
    }
    const measured = await measure({ server, workload, token, seconds, connections: options.connections, query, nextCreateId, deletePool: pool });
    if (pool) await data.deleteRange(poolFrom, poolFrom + 2n ** 32n);
    const key = `${server.name} ${workload}`;
    bestRate.set(key, Math.max(bestRate.get(key) ?? 0, measured.reqPerSec));
    if (server.exited()) throw new Error(`${server.name} exited during ${workload}:\n${server.output().slice(-4000)}`);
    return { ...measured, round, load1: Math.round(os.loadavg()[0]! * 100) / 100 };
  };

  const check = (record: RunRecord, phase: string) => {
    const what = `${phase}: ${record.server} ${record.workload}${record.round ? ` round ${record.round}` : ''}`;
    if (record.status5xx > 0) failures.push(`${what}: ${record.status5xx} responses with 5xx`);
    const other = record.unexpected - record.status5xx;
    if (other > 0) failures.push(`${what}: ${other} unexpected responses that are not 5xx (${JSON.stringify(record.statusCounts)})`);
    if (record.errors > 0 || record.timeouts > 0) failures.push(`${what}: ${record.errors} connection errors, ${record.timeouts} timeouts`);
    if (record.poolExhausted) failures.push(`${what}: ran out of seeded ids to delete`);
  };

  const line = (record: RunRecord, label: string) =>
    console.log(
      `${label.padEnd(16)} ${record.server.padEnd(5)} ${int(record.reqPerSec).padStart(7)} req/s  p50 ${fixed(record.latencyMs.p50).padStart(7)} ms  p99 ${fixed(record.latencyMs.p99).padStart(7)} ms  ` +
        `rss ${mb(record.peakRss).padStart(4)} MB  cpu ${fixed(record.serverCpu)} (client ${fixed(record.clientCpu)}, others ${fixed(record.otherCpu)})  unexpected ${record.unexpected}${record.errors + record.timeouts ? `  errors ${record.errors + record.timeouts}` : ''}`,
    );

  return { run, check, line, nextCreateId };
}
