/**
 * `npm run bench`: Plant Store's REST API under load, beside a floor (bench/floor.ts: the same operations on
 * bare node:http + better-sqlite3), on a temporary database. Prints figures; it is not a pass/fail test,
 * except that a run with 5xx answers, errors or unexpected statuses says so loudly and exits 1.
 *
 *   node node_modules/tsx/dist/cli.mjs bench/run.ts [--quick] [--rebuild] [--soak[=MINUTES]] [--profile] …
 *
 * Phases: setup (build into .next-bench/ when needed, start the app on a fresh database, a member token,
 * 1,000 plants, the floor, a contract check that both answer alike), `ab` (list limit=20, create, delete;
 * app and floor alternating A/B/A/B), `scale` (list latency, first and a deep `after` page, at 10k, 100k
 * and 1M plants), `profile` (with --profile: the app under --cpu-prof, self time by package and function),
 * `soak` (with --soak: list for N minutes, RSS every 10 s), `cold` (npm start to the first 200, existing
 * build and database). The figures go to stdout as markdown and to bench/results/latest.json.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BENCH_DIST_DIR, ensureBuild } from './lib/build';
import { type BenchDb, CREATE_BASE, DELETE_BASE, openBenchDb } from './lib/data';
import { type Measurement, measure, sequentialLatency, type Workload } from './lib/load';
import { benchDir, projectRoot, tsxCli } from './lib/paths';
import { childEnv, descendants, freePort, memory, type Server, startProcess, waitFor200 } from './lib/proc';
import { type ProfileSummary, summariseProfile } from './lib/profile';
import { fixed, int, mb, mean, median, table } from './lib/report';

const USAGE = `usage: node node_modules/tsx/dist/cli.mjs bench/run.ts [options]

  --quick              a smoke run: 2 s per measurement, 1 cold start (about a minute and a half)
  --rebuild            build .next-bench/ even when its BUILD_ID exists
  --soak[=MINUTES]     also run list against the app for MINUTES (default 5), sampling RSS every 10 s
  --profile            also run each workload against an app started with --cpu-prof and summarise it
  --skip=PHASES        leave out phases: ab, scale, cold (comma-separated)
  --seconds=S          seconds per A/B measurement (default 10; --quick 2)
  --rounds=R           A/B rounds (default 2)
  --connections=N      concurrent connections (default 32)
  --scales=LIST        plant counts for the scale phase (default 10000,100000,1000000)
  --keep               keep the temporary database folder
  --baseline=DIR       also run the app as checked out in DIR (another commit, e.g. from git archive, with
                       node_modules, src/generated and ${BENCH_DIST_DIR} linked) in the A/B rotation, so a
                       change is measured against its parent in the same run, on the same database`;

type Options = {
  quick: boolean;
  rebuild: boolean;
  soakMinutes: number | null;
  profile: boolean;
  skip: Set<string>;
  seconds: number;
  rounds: number;
  connections: number;
  warmSeconds: number;
  scaleSeconds: number;
  sequentialRequests: number;
  profileSeconds: number;
  coldRuns: number;
  scales: number[];
  keep: boolean;
  baseline: string | null;
};

function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string | true>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unknown argument: ${arg}`);
    flags.set(match[1]!, match[2] ?? true);
  }
  const known = ['quick', 'rebuild', 'soak', 'profile', 'skip', 'seconds', 'rounds', 'connections', 'scales', 'keep', 'baseline', 'help'];
  for (const name of flags.keys()) if (!known.includes(name)) throw new UsageError(`unknown option: --${name}`);
  if (flags.has('help')) throw new UsageError('');
  const number = (name: string, fallback: number) => {
    const value = flags.get(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (value === true || !Number.isFinite(parsed) || parsed <= 0) throw new UsageError(`--${name} takes a positive number`);
    return parsed;
  };
  const quick = flags.has('quick');
  const soak = flags.get('soak');
  const skip = new Set(String(flags.get('skip') ?? '').split(',').filter(Boolean));
  for (const phase of skip) if (!['ab', 'scale', 'cold'].includes(phase)) throw new UsageError(`--skip takes ab, scale, cold; not ${phase}`);
  const scales = flags.has('scales') ? String(flags.get('scales')).split(',').map(Number) : [10_000, 100_000, 1_000_000];
  if (scales.some((n) => !Number.isInteger(n) || n < 1000)) throw new UsageError('--scales takes whole numbers of at least 1000');
  return {
    quick,
    rebuild: flags.has('rebuild'),
    soakMinutes: soak === undefined ? null : soak === true ? 5 : number('soak', 5),
    profile: flags.has('profile'),
    skip,
    seconds: number('seconds', quick ? 2 : 10),
    rounds: number('rounds', 2),
    connections: number('connections', 32),
    warmSeconds: quick ? 1 : 2,
    scaleSeconds: quick ? 2 : 5,
    sequentialRequests: quick ? 50 : 200,
    profileSeconds: quick ? 3 : 8,
    coldRuns: quick ? 1 : 3,
    scales: scales.sort((a, b) => a - b),
    keep: flags.has('keep'),
    baseline: typeof flags.get('baseline') === 'string' ? path.resolve(String(flags.get('baseline'))) : null,
  };
}

class UsageError extends Error {}

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;
const WORKLOADS: Workload[] = ['list', 'create', 'delete'];

function appEnv(port: number, databaseUrl: string): Record<string, string> {
  return {
    NEXT_DIST_DIR: BENCH_DIST_DIR,
    PORT: String(port),
    HOSTNAME_TO_BIND: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_TOKEN: 'off',
  };
}

/** The app exactly as `npm start` runs it, but with node itself as the process (so its pid is the server's). */
function startApp(port: number, databaseUrl: string, nodeFlags: string[] = [], baseline?: string): Server {
  return startProcess({
    name: baseline ? 'base' : 'app',
    command: process.execPath,
    args: [...nodeFlags, '--conditions=react-server', '--import', 'tsx', 'src/cli/start.ts'],
    env: appEnv(port, databaseUrl),
    port,
    cwd: baseline,
  });
}

function startFloor(port: number, databaseUrl: string): Server {
  return startProcess({
    name: 'floor',
    command: process.execPath,
    args: ['--import', 'tsx', path.relative(projectRoot, path.join(benchDir, 'floor.ts'))],
    env: { DATABASE_URL: databaseUrl, PORT: String(port), HOSTNAME_TO_BIND: '127.0.0.1' },
    port,
  });
}

function createMemberToken(databaseUrl: string): string {
  const result = spawnSync(process.execPath, [tsxCli, '--conditions=react-server', 'src/cli/token.ts', 'create', '--user', 'bench', '--role', 'member'], {
    cwd: projectRoot,
    env: childEnv({ DATABASE_URL: databaseUrl }),
    encoding: 'utf8',
  });
  const token = result.stdout.trimEnd().split('\n').at(-1)?.trim() ?? '';
  if (result.status !== 0 || !TOKEN_LINE.test(token)) throw new Error(`token create failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  return token;
}

// ---------------------------------------------------------------------------------------------------------
// The contract check: the floor is only a floor if it answers what the app answers.

type Answer = { status: number; body: string; link: string | null; contentType: string | null };

async function call(server: Server, token: string | null, method: string, url: string, body?: string): Promise<Answer> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(server.baseUrl + url, { method, headers, body });
  return {
    status: response.status,
    body: await response.text(),
    link: response.headers.get('link')?.replace(server.baseUrl, '<base>') ?? null,
    contentType: response.headers.get('content-type'),
  };
}

async function contractCheck(app: Server, floor: Server, token: string, data: BenchDb, nextCreateId: () => bigint): Promise<void> {
  const same = (what: string, a: Answer, b: Answer, expectedStatus: number) => {
    if (a.status !== expectedStatus || b.status !== expectedStatus || a.body !== b.body || a.link !== b.link || a.contentType !== b.contentType) {
      throw new Error(`contract check failed for ${what}:\n  app:   ${JSON.stringify(a)}\n  floor: ${JSON.stringify(b)}`);
    }
  };
  for (const query of ['limit=20', `limit=20&after=${data.seededId(500)}`, 'limit=1000', `limit=5&after=${data.seededId(997)}`]) {
    same(`GET /api/plants?${query}`, await call(app, token, 'GET', `/api/plants?${query}`), await call(floor, token, 'GET', `/api/plants?${query}`), 200);
  }
  same('GET /api/plants without a token', await call(app, null, 'GET', '/api/plants'), await call(floor, null, 'GET', '/api/plants'), 401);
  const [appId, floorId] = [nextCreateId(), nextCreateId()];
  const created = [
    await call(app, token, 'POST', '/api/plants', `{"id": ${appId}, "name": "Check plant", "tag": "tropical"}`),
    await call(floor, token, 'POST', '/api/plants', `{"id": ${floorId}, "name": "Check plant", "tag": "tropical"}`),
  ] as const;
  same('POST /api/plants', created[0], { ...created[1], body: created[1].body.replace(String(floorId), String(appId)) }, 200);
  if (!data.exists(appId) || !data.exists(floorId)) throw new Error('contract check: a created plant is not in the database');
  same(
    'DELETE /api/plants/{id}',
    await call(app, token, 'DELETE', `/api/plants/${appId}`),
    await call(floor, token, 'DELETE', `/api/plants/${floorId}`),
    204,
  );
  const again = await call(floor, token, 'DELETE', `/api/plants/${floorId}`);
  same('DELETE /api/plants/{id} again', await call(app, token, 'DELETE', `/api/plants/${appId}`), { ...again, body: again.body.replace(String(floorId), String(appId)) }, 404);
}

// ---------------------------------------------------------------------------------------------------------

type RunRecord = Measurement & { round: number; load1: number };

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  const loadAtStart = os.loadavg();
  const cores = os.cpus().length;
  console.log(`# Plant Store benchmark (${options.quick ? 'quick' : 'full'} run)`);
  console.log(`load average ${loadAtStart.map((n) => n.toFixed(2)).join(' ')} on ${cores} cores`);
  if (loadAtStart[0]! > cores * 0.25) console.log(`!! the machine is busy (1-minute load ${loadAtStart[0]!.toFixed(2)}): figures will be noisy`);
  console.log('(the load average during and after the run includes the run itself: about 2 on 2 cores)');

  const buildSeconds = ensureBuild(options.rebuild);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-bench-'));
  const dbFile = path.join(dir, 'bench.db');
  const databaseUrl = `file:${dbFile}`;
  const running = new Set<Server>();
  let data: BenchDb | undefined;
  const failures: string[] = [];
  const results: Record<string, unknown> = {};
  const report: string[] = [];

  const stopAll = async () => {
    await Promise.all([...running].map((server) => server.stop()));
    running.clear();
  };
  const onSignal = () => {
    console.error('\ninterrupted: stopping the servers this run started');
    void stopAll().finally(() => {
      if (!options.keep) rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // --- setup --------------------------------------------------------------------------------------------
    const appPort = await freePort();
    const spawnedAt = performance.now();
    const app = startApp(appPort, databaseUrl);
    running.add(app);
    const firstStartMs = await waitFor200(app, '/api/health', spawnedAt);
    const token = createMemberToken(databaseUrl);
    data = openBenchDb(dbFile);
    const memberId = data.userId('bench');
    data.seedUpTo(memberId, 1000);
    const floor = startFloor(await freePort(), databaseUrl);
    running.add(floor);
    await waitFor200(floor, '/api/health', performance.now(), 30_000);
    const appChildren = descendants(app.pid);
    let createCounter = 0n;
    const nextCreateId = () => CREATE_BASE + createCounter++;
    await contractCheck(app, floor, token, data, nextCreateId);
    let base: Server | undefined;
    if (options.baseline) {
      base = startApp(await freePort(), databaseUrl, [], options.baseline);
      running.add(base);
      await waitFor200(base, '/api/health', performance.now());
      await contractCheck(base, floor, token, data, nextCreateId);
      console.log(`baseline app pid ${base.pid} from ${options.baseline}`);
    }
    const apps = base ? [app, base] : [app];
    console.log(`app pid ${app.pid} (children: ${appChildren.length}), floor pid ${floor.pid}; database ${dbFile}`);
    console.log(`first start on an empty database (migrate, first admin, Next.js prepare): ${int(firstStartMs)} ms; contract check passed`);
    results.setup = { buildSeconds, firstStartMs: Math.round(firstStartMs), appChildren: appChildren.length, databaseFile: dbFile };

    const bestRate = new Map<string, number>();
    let poolRun = 0n;
    const check = (record: RunRecord, phase: string) => {
      const what = `${phase}: ${record.server} ${record.workload}${record.round ? ` round ${record.round}` : ''}`;
      if (record.status5xx > 0) failures.push(`${what}: ${record.status5xx} responses with 5xx`);
      const other = record.non2xx - record.status5xx;
      if (other > 0) failures.push(`${what}: ${other} non-2xx responses that are not 5xx (${JSON.stringify(record.statusCounts)})`);
      if (record.errors > 0 || record.timeouts > 0) failures.push(`${what}: ${record.errors} connection errors, ${record.timeouts} timeouts`);
      if (record.poolExhausted) failures.push(`${what}: ran out of seeded ids to delete`);
    };
    const line = (record: RunRecord, label: string) =>
      console.log(
        `${label.padEnd(14)} ${record.server.padEnd(5)} ${int(record.reqPerSec).padStart(7)} req/s  p50 ${fixed(record.latencyMs.p50).padStart(7)} ms  p99 ${fixed(record.latencyMs.p99).padStart(7)} ms  ` +
          `rss ${mb(record.peakRss).padStart(4)} MB  cpu ${fixed(record.serverCpu)} (client ${fixed(record.clientCpu)}, others ${fixed(record.otherCpu)})  non-2xx ${record.non2xx}${record.errors + record.timeouts ? `  errors ${record.errors + record.timeouts}` : ''}`,
      );

    /** One measurement; delete gets a fresh pool of the member's plants, sized from the best rate seen so far. */
    const run = async (server: Server, workload: Workload, seconds: number, round: number, query = 'limit=20'): Promise<RunRecord> => {
      let pool: bigint[] | undefined;
      let poolFrom = 0n;
      if (workload === 'delete') {
        const size = Math.ceil((bestRate.get(server.name) ?? 10_000) * seconds * 3) + 5_000;
        poolFrom = DELETE_BASE + poolRun++ * 2n ** 32n;
        pool = Array.from({ length: size }, (_, i) => poolFrom + BigInt(i));
        data!.insertIds(memberId, pool);
      }
      const measured = await measure({ server, workload, token, seconds, connections: options.connections, query, nextCreateId, deletePool: pool });
      if (pool) data!.deleteRange(poolFrom, poolFrom + 2n ** 32n);
      bestRate.set(server.name, Math.max(bestRate.get(server.name) ?? 0, measured.reqPerSec));
      if (server.exited()) throw new Error(`${server.name} exited during ${workload}:\n${server.output().slice(-4000)}`);
      return { ...measured, round, load1: Math.round(os.loadavg()[0]! * 100) / 100 };
    };

    // --- A/B ----------------------------------------------------------------------------------------------
    if (!options.skip.has('ab')) {
      console.log(`\n## A/B: ${options.connections} connections, ${options.rounds} × ${options.seconds} s per server and workload`);
      const warmups: RunRecord[] = [];
      for (const server of [...apps, floor]) {
        for (const workload of WORKLOADS) {
          const record = await run(server, workload, options.warmSeconds, 0);
          check(record, 'warm-up');
          warmups.push(record);
          line(record, `warm ${workload}`);
        }
      }
      const runs: RunRecord[] = [];
      // Filled as the runs come in, so an aborted run still reports them.
      results.ab = { connections: options.connections, seconds: options.seconds, rounds: options.rounds, runs, warmups };
      for (const workload of WORKLOADS) {
        for (let round = 1; round <= options.rounds; round++) {
          for (const server of [...apps, floor]) {
            const record = await run(server, workload, options.seconds, round);
            check(record, 'A/B');
            runs.push(record);
            line(record, `${workload} r${round}`);
          }
        }
      }
      const summary = WORKLOADS.map((workload) => {
        const of = (name: string) => runs.filter((record) => record.workload === workload && record.server === name);
        const summarise = (records: RunRecord[]) => ({
          reqPerSec: Math.round(mean(records.map((r) => r.reqPerSec))),
          p50: Math.round(mean(records.map((r) => r.latencyMs.p50)) * 100) / 100,
          p99: Math.max(...records.map((r) => r.latencyMs.p99)),
          peakRss: Math.max(...records.map((r) => r.peakRss)),
          hwmAfter: Math.max(...records.map((r) => r.hwmAfter)),
          serverCpu: Math.round(mean(records.map((r) => r.serverCpu)) * 100) / 100,
          cpuMsPer1k: Math.round(mean(records.map((r) => r.cpuMsPer1k)) * 10) / 10,
          otherCpu: Math.max(...records.map((r) => r.otherCpu)),
          non2xx: records.reduce((total, r) => total + r.non2xx, 0),
          status5xx: records.reduce((total, r) => total + r.status5xx, 0),
        });
        const appSummary = summarise(of('app'));
        const floorSummary = summarise(of('floor'));
        const ratioToFloor = (records: ReturnType<typeof summarise>) => Math.round((records.reqPerSec / floorSummary.reqPerSec) * 1000) / 1000;
        const baseSummary = base ? summarise(of('base')) : undefined;
        return {
          workload,
          app: appSummary,
          floor: floorSummary,
          ratio: ratioToFloor(appSummary),
          ...(baseSummary && { base: baseSummary, baseRatio: ratioToFloor(baseSummary) }),
        };
      });
      results.ab = { connections: options.connections, seconds: options.seconds, rounds: options.rounds, summary, runs, warmups };

      const rows: (string | number)[][] = [];
      for (const entry of summary) {
        for (const name of ['app', ...(entry.base ? ['base' as const] : []), 'floor'] as const) {
          const s = entry[name]!;
          rows.push([
            entry.workload,
            name,
            int(s.reqPerSec),
            fixed(s.p50),
            fixed(s.p99),
            mb(s.peakRss),
            mb(s.hwmAfter),
            fixed(s.serverCpu),
            fixed(s.cpuMsPer1k, 1),
            `${s.non2xx}${s.status5xx ? ` (${s.status5xx} 5xx!)` : ''}`,
            fixed(s.otherCpu),
            name === 'app' ? fixed(entry.ratio) : name === 'base' ? fixed(entry.baseRatio!) : '',
          ]);
        }
      }
      report.push(
        `### A/B: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s each, ${base ? `app, base (${options.baseline}) and floor` : 'app and floor'} alternating`,
        '',
        table(
          ['workload', 'server', 'req/s', 'p50 ms', 'p99 ms (worst)', 'peak RSS MB', 'VmHWM MB', 'server CPU', 'CPU ms/1k req', 'non-2xx', 'others CPU', 'app/floor req/s'],
          rows,
          ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
        'req/s and p50: mean of the rounds; p99: the worst round; peak RSS: VmRSS sampled every 250 ms; VmHWM: the',
        "kernel's peak since the server started (it only grows). server CPU: CPU seconds per second (1.00 = one core);",
        'others CPU: cores busy with anything but the server and autocannon meanwhile (worst round): well above 0 means noise.',
        '',
      );
      const goal = summary.map((entry) => {
        const parts = [];
        if (entry.workload !== 'delete') parts.push(`app/floor ${fixed(entry.ratio)} ${entry.ratio >= 0.5 ? 'meets' : 'misses'} ≥ 0.50`);
        parts.push(`p99 ${fixed(entry.app.p99)} ms ${entry.app.p99 < 20 ? 'meets' : 'misses'} < 20 ms`);
        return `- ${entry.workload}: ${parts.join('; ')}`;
      });
      report.push('Goal (for later work):', ...goal, '');
    }

    // --- scale --------------------------------------------------------------------------------------------
    if (!options.skip.has('scale')) {
      // Back to the seeded plants only: what the A/B phase created is removed.
      data.deleteRange(DELETE_BASE, 2n ** 63n - 1n);
      console.log(`\n## Scale: list limit=20, first page and a deep page (after the plant at 90 %), ${options.scaleSeconds} s each at ${options.connections} connections`);
      const rows: (string | number)[][] = [];
      const scaleResults: Record<string, unknown>[] = [];
      results.scale = { seconds: options.scaleSeconds, sequentialRequests: options.sequentialRequests, runs: scaleResults };
      for (const plants of options.scales) {
        const seedStart = performance.now();
        const added = data.seedUpTo(memberId, plants);
        const seedSeconds = (performance.now() - seedStart) / 1000;
        const dbMb = mb(statSync(dbFile).size);
        console.log(`${int(plants)} plants (${int(added)} added in ${fixed(seedSeconds, 1)} s; database ${dbMb} MB)`);
        for (const page of ['first', 'deep'] as const) {
          const query = page === 'first' ? 'limit=20' : `limit=20&after=${data.seededId(Math.floor(plants * 0.9))}`;
          const [appPage, floorPage] = [await call(app, token, 'GET', `/api/plants?${query}`), await call(floor, token, 'GET', `/api/plants?${query}`)];
          if (appPage.status !== 200 || appPage.body !== floorPage.body || (JSON.parse(appPage.body) as unknown[]).length !== 20 || !appPage.link) {
            throw new Error(`scale ${plants}, ${page} page: app and floor disagree or the page is not a full one with a next link`);
          }
          for (const server of [app, floor]) {
            const sequential = await sequentialLatency(server.baseUrl, `/api/plants?${query}`, token, options.sequentialRequests);
            if (sequential.non200 > 0) failures.push(`scale ${plants} ${page}: ${server.name} answered ${sequential.non200} sequential requests with non-200`);
            const record = await run(server, page === 'first' ? 'list' : 'listDeep', options.scaleSeconds, 0, query);
            check(record, `scale ${plants} ${page} page`);
            line(record, `${int(plants)} ${page}`);
            scaleResults.push({ plants, page, query, sequential, ...record });
            rows.push([
              int(plants),
              page,
              server.name,
              fixed(sequential.p50),
              fixed(sequential.p99),
              int(record.reqPerSec),
              fixed(record.latencyMs.p50),
              fixed(record.latencyMs.p99),
            ]);
          }
        }
      }
      const appRows = scaleResults.filter((r) => r.server === 'app') as unknown as (RunRecord & { sequential: { p50: number } })[];
      const spread = (values: number[]) => Math.max(...values) / Math.min(...values);
      const flatness = {
        sequentialP50Spread: Math.round(spread(appRows.map((r) => r.sequential.p50)) * 100) / 100,
        reqPerSecSpread: Math.round(spread(appRows.map((r) => r.reqPerSec)) * 100) / 100,
      };
      results.scale = { seconds: options.scaleSeconds, sequentialRequests: options.sequentialRequests, runs: scaleResults, flatness };
      report.push(
        `### Scale: list limit=20 for one member owning all plants; deep page = after the plant at 90 %`,
        '',
        table(
          ['plants', 'page', 'server', `1-at-a-time p50 ms`, '1-at-a-time p99 ms', `req/s @${options.connections}`, 'p50 ms', 'p99 ms'],
          rows,
          ['r', 'l', 'l', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
        `App across all sizes and pages: 1-at-a-time p50 varies ×${fixed(flatness.sequentialP50Spread)}, req/s ×${fixed(flatness.reqPerSecSpread)} ` +
          `(max/min; keyset paging is flat when these stay near 1).`,
        '',
      );
    }

    // --- profile ------------------------------------------------------------------------------------------
    if (options.profile) {
      console.log(`\n## Profile: the app under --cpu-prof, ${options.profileSeconds} s per workload`);
      const profileDir = path.join(dir, 'profile');
      mkdirSync(profileDir);
      const port = await freePort();
      const profiledSpawn = performance.now();
      const profiled = startApp(port, databaseUrl, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]);
      running.add(profiled);
      await waitFor200(profiled, '/api/health', profiledSpawn);
      for (const workload of WORKLOADS) await run(profiled, workload, 2, 0);
      const windows: { workload: Workload; from: number; to: number; record: RunRecord }[] = [];
      for (const workload of WORKLOADS) {
        const from = performance.now() - profiledSpawn;
        const record = await run(profiled, workload, options.profileSeconds, 0);
        windows.push({ workload, from, to: performance.now() - profiledSpawn, record });
        line(record, `profile ${workload}`);
      }
      await profiled.stop();
      running.delete(profiled);
      const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
      if (!file) throw new Error('the profiled app wrote no .cpuprofile');
      const resultsDir = path.join(benchDir, 'results');
      mkdirSync(resultsDir, { recursive: true });
      copyFileSync(path.join(profileDir, file), path.join(resultsDir, 'app.cpuprofile'));
      const summaries: Record<string, ProfileSummary & { reqPerSec: number }> = {};
      for (const window of windows) {
        summaries[window.workload] = { ...summariseProfile(path.join(profileDir, file), window.from, window.to, 15), reqPerSec: window.record.reqPerSec };
      }
      results.profile = { file: path.relative(projectRoot, path.join(resultsDir, 'app.cpuprofile')), seconds: options.profileSeconds, summaries };
      report.push(`### Where the app spends its CPU (self time, --cpu-prof; ${options.profileSeconds} s per workload; idle left out)`, '');
      for (const [workload, summary] of Object.entries(summaries)) {
        report.push(
          `**${workload}** (${int(summary.reqPerSec)} req/s under the profiler; busy ${int(summary.totalMs - summary.idleMs)} ms of ${int(summary.totalMs)} ms)`,
          '',
          table(
            ['self: where', 'share', 'inclusive: where', 'share'],
            Array.from({ length: 12 }, (_, i) => [
              summary.byPlace[i]?.place ?? '',
              summary.byPlace[i] ? `${fixed(summary.byPlace[i].share, 1)} %` : '',
              summary.inclusiveByPlace[i]?.place ?? '',
              summary.inclusiveByPlace[i] ? `${fixed(summary.inclusiveByPlace[i].share, 1)} %` : '',
            ]),
            ['l', 'r', 'l', 'r'],
          ),
          '',
          table(
            ['top functions (self)', 'share'],
            summary.byFunction.slice(0, 10).map((entry) => [entry.fn, `${fixed(entry.share, 1)} %`]),
            ['l', 'r'],
          ),
          '',
        );
      }
    }

    // --- soak ---------------------------------------------------------------------------------------------
    if (options.soakMinutes !== null) {
      console.log(`\n## Soak: list against the app for ${options.soakMinutes} min, RSS every 10 s`);
      const samples: { at: number; rss: number; hwm: number; reqPerSec: number }[] = [];
      const measured = await measure({
        server: app,
        workload: 'list',
        token,
        seconds: Math.round(options.soakMinutes * 60),
        connections: options.connections,
        query: 'limit=20',
        sampleEverySeconds: 10,
        onSample: ({ at, rss, hwm, responses }) => {
          samples.push({ at: Math.round(at), rss, hwm, reqPerSec: Math.round(responses / 10) });
          console.log(`  ${String(Math.round(at)).padStart(4)} s  rss ${mb(rss)} MB  hwm ${mb(hwm)} MB  ${int(responses / 10)} req/s`);
        },
      });
      const record: RunRecord = { ...measured, round: 0, load1: Math.round(os.loadavg()[0]! * 100) / 100 };
      check(record, 'soak');
      // RSS growth after the first minute (warm-up and heap sizing; a third of shorter soaks), as a least-squares slope.
      const settled = Math.min(60, (options.soakMinutes * 60) / 3);
      const steady = samples.filter((sample) => sample.at >= settled);
      const slope = (() => {
        if (steady.length < 2) return Number.NaN;
        const xs = steady.map((s) => s.at / 60);
        const ys = steady.map((s) => s.rss / 1024 / 1024);
        const [mx, my] = [mean(xs), mean(ys)];
        const num = xs.reduce((total, x, i) => total + (x - mx) * (ys[i]! - my), 0);
        const den = xs.reduce((total, x) => total + (x - mx) ** 2, 0);
        return num / den;
      })();
      // RSS swings with the heap's GC cycles, so the first and last samples say little. A leak shows as a rising
      // trend and as rising troughs: the fitted slope over the window, and the lowest RSS of each half.
      const windowMinutes = steady.length >= 2 ? (steady.at(-1)!.at - steady[0]!.at) / 60 : Number.NaN;
      const trendMb = slope * windowMinutes;
      const half = Math.floor(steady.length / 2);
      const trough = (part: typeof steady) => Math.min(...part.map((s) => s.rss)) / 1024 / 1024;
      const troughRiseMb = half >= 1 ? trough(steady.slice(half)) - trough(steady.slice(0, half)) : Number.NaN;
      const allowanceMb = Math.max(10, (mean(steady.map((s) => s.rss)) / 1024 / 1024) * 0.03);
      const flat = Math.abs(trendMb) <= allowanceMb && troughRiseMb <= allowanceMb;
      const rss = steady.map((s) => s.rss / 1024 / 1024);
      results.soak = {
        minutes: options.soakMinutes,
        samples,
        settledAfterSeconds: settled,
        rssMbRange: [Math.round(Math.min(...rss)), Math.round(Math.max(...rss))],
        rssSlopeMbPerMin: Math.round(slope * 100) / 100,
        rssTrendMb: Math.round(trendMb * 10) / 10,
        rssTroughRiseMb: Math.round(troughRiseMb * 10) / 10,
        flat,
        run: record,
      };
      report.push(
        `### Soak: list limit=20 against the app for ${options.soakMinutes} min at ${options.connections} connections`,
        '',
        table(
          ['t s', 'RSS MB', 'VmHWM MB', 'req/s'],
          samples.map((sample) => [sample.at, mb(sample.rss), mb(sample.hwm), int(sample.reqPerSec)]),
          ['r', 'r', 'r', 'r'],
        ),
        '',
        `${int(record.reqPerSec)} req/s, p50 ${fixed(record.latencyMs.p50)} ms, p99 ${fixed(record.latencyMs.p99)} ms, non-2xx ${record.non2xx}. ` +
          `RSS from ${settled} s on: ${fixed(Math.min(...rss), 0)}–${fixed(Math.max(...rss), 0)} MB; fitted trend ${fixed(slope)} MB/min ` +
          `(${fixed(trendMb, 1)} MB over the window); lowest RSS of the second half vs the first: ${troughRiseMb >= 0 ? '+' : ''}${fixed(troughRiseMb, 1)} MB. ` +
          `${flat ? 'Flat' : 'NOT FLAT'} (allowance ${fixed(allowanceMb, 0)} MB: 10 MB or 3 %).`,
        '',
      );
    }

    // --- cold start ---------------------------------------------------------------------------------------
    if (!options.skip.has('cold')) {
      await app.stop();
      running.delete(app);
      console.log(`\n## Cold start: existing build and database, ${options.coldRuns} run(s) each`);
      const npmCli = process.env.npm_execpath;
      const ways = [
        { name: 'npm start', command: npmCli?.endsWith('.js') ? process.execPath : 'npm', args: npmCli?.endsWith('.js') ? [npmCli, 'start'] : ['start'], group: true },
        { name: 'node --import tsx src/cli/start.ts', command: process.execPath, args: ['--conditions=react-server', '--import', 'tsx', 'src/cli/start.ts'], group: false },
      ];
      const coldResults: { way: string; healthMs: number; listMs: number; pageMs: number; rssAfter: number }[] = [];
      for (let attempt = 0; attempt < options.coldRuns; attempt++) {
        for (const way of ways) {
          const port = await freePort();
          const since = performance.now();
          const server = startProcess({ name: way.name, command: way.command, args: way.args, env: appEnv(port, databaseUrl), port, group: way.group });
          running.add(server);
          try {
            const healthMs = await waitFor200(server, '/api/health', since);
            const list = await call(server, token, 'GET', '/api/plants?limit=20');
            const listMs = performance.now() - since;
            const page = await fetch(`${server.baseUrl}/`);
            await page.arrayBuffer();
            const pageMs = performance.now() - since;
            if (list.status !== 200 || page.status !== 200) failures.push(`cold start (${way.name}): list answered ${list.status}, / answered ${page.status}`);
            // Under npm start the server is a grandchild (npm → sh → tsx → node): the largest process of the group.
            const serverPid = way.group ? [server.pid, ...descendants(server.pid)].sort((a, b) => memory(b).rss - memory(a).rss)[0]! : server.pid;
            coldResults.push({ way: way.name, healthMs: Math.round(healthMs), listMs: Math.round(listMs), pageMs: Math.round(pageMs), rssAfter: memory(serverPid).rss });
            console.log(`${way.name.padEnd(36)} health ${int(healthMs)} ms, first list ${int(listMs)} ms, first page / ${int(pageMs)} ms`);
          } finally {
            await server.stop();
            running.delete(server);
          }
        }
      }
      results.cold = coldResults;
      report.push(
        `### Cold start: spawn to the first 200 (existing ${BENCH_DIST_DIR} build and database; median of ${options.coldRuns})`,
        '',
        table(
          ['command', 'GET /api/health', 'then GET /api/plants', 'then GET /', 'RSS after MB'],
          ways.map((way) => {
            const of = coldResults.filter((r) => r.way === way.name);
            return [way.name, `${int(median(of.map((r) => r.healthMs)))} ms`, `${int(median(of.map((r) => r.listMs)))} ms`, `${int(median(of.map((r) => r.pageMs)))} ms`, mb(median(of.map((r) => r.rssAfter)))];
          }),
          ['l', 'r', 'r', 'r', 'r'],
        ),
        '',
        `First start on an empty database (migrations, first admin; node --import tsx): ${int(firstStartMs)} ms to /api/health.`,
        '',
      );
    }
  } catch (error) {
    // A server that dies or a check that fails ends the run; what was measured so far is still reported.
    failures.push(`the run was aborted: ${error instanceof Error ? error.message : String(error)}`);
    console.error(error);
  } finally {
    await stopAll();
    data?.close();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }

  const loadAtEnd = os.loadavg();
  const git = (args: string[]) => spawnSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).stdout?.trim() ?? '';
  const meta = {
    startedAt: startedAt.toISOString(),
    seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    mode: options.quick ? 'quick' : 'full',
    commit: git(['rev-parse', '--short', 'HEAD']),
    uncommittedFiles: git(['status', '--porcelain']).split('\n').filter(Boolean).length,
    node: process.version,
    cpus: `${cores} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    loadAtStart: loadAtStart.map((n) => Math.round(n * 100) / 100),
    loadAtEnd: loadAtEnd.map((n) => Math.round(n * 100) / 100),
    options: { ...options, skip: [...options.skip] },
  };
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify({ meta, ...results, failures }, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`);

  console.log(`\n## Results (${meta.mode} run, ${meta.seconds} s; commit ${meta.commit}${meta.uncommittedFiles ? ` + ${meta.uncommittedFiles} uncommitted files` : ''}; node ${meta.node}; ${meta.cpus})`);
  console.log(`load average at start ${meta.loadAtStart.join(' ')}, at end ${meta.loadAtEnd.join(' ')} (the end includes this run)\n`);
  console.log(report.join('\n'));
  console.log(`written to ${path.relative(projectRoot, path.join(resultsDir, 'latest.json'))}`);
  if (failures.length > 0) {
    const fiveHundreds = failures.filter((failure) => failure.includes('5xx'));
    console.log(`\n${'!'.repeat(100)}`);
    if (fiveHundreds.length > 0) console.log(`!!! THE SERVER ANSWERED 5xx DURING THE RUN (${fiveHundreds.length} measurement(s))`);
    console.log('!!! THIS RUN FAILED:');
    for (const failure of failures) console.log(`!!!   ${failure}`);
    console.log('!'.repeat(100));
    return 1;
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      // --help: the usage on stdout, success; a wrong argument: the reason and the usage on stderr.
      if (error.message) console.error(`${error.message}\n${USAGE}`);
      else console.log(USAGE);
      process.exitCode = error.message ? 2 : 0;
      return;
    }
    console.error(error);
    process.exitCode = 1;
  },
);

