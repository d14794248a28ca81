/**
 * `npm run bench`: Plant Store's REST API under load, beside a floor (bench/floor.ts: the same operations on
 * bare node:http + better-sqlite3), on a temporary database. Prints figures; it is not a pass/fail test,
 * except that a run with 5xx answers, errors or unexpected statuses says so loudly and exits 1.
 *
 *   npm run bench -- [--quick] [--rebuild] [--floor-check] [--soak[=MINUTES]] [--profile] [--baseline=DIR] …
 *
 * Setup: build into .bench-build/ when the sources are newer (lib/build.ts), start the compiled app (node
 * .bench-build/server.mjs) on a fresh database, a member token, 1,000 plants, the floor, a contract check
 * that both answer the same bytes and headers. Phases (bench/phases/): `ab` (list, create, delete in
 * rounds, app and floor alternating; the spread of the ratio), `--floor-check` (the floor against a bare
 * node:http handler), `scale` (10k … 10M plants: list first and deep page, create, delete, one at a time
 * and at N connections; size on disk), `--profile`, `memory` (RSS along the way and after a --soak, heap
 * by package), `cold` (npm start to the first 200), `browser` (the first admin page load in Chromium), and
 * when named, `instances` (PostgreSQL: one instance against two; the shared rate-limit budget beside a baseline).
 * The figures go to stdout as markdown and to bench/results/latest.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BODY_LIMIT_BYTES } from '@/shared/limits';
import { PLANT_FIELD_NAMES } from '@/shared/plants';
import { createPostgresDatabase } from '@test-support/database';
import { exampleOf } from '@test-support/plant-fields';
import { type PrivatePostgres, startPrivatePostgres } from '@test-support/postgres';

import { bundleBenchServers, checkoutAt, ensureBuild } from './lib/build';
import { type Context, makeRunner } from './lib/context';
import { type BenchDb, openPostgresBenchDb, openSqliteBenchDb } from './lib/data';
import { parseOptions, UsageError, USAGE } from './lib/options';
import { benchDir, projectRoot } from './lib/paths';
import { descendants, freePort, type Server, waitFor200 } from './lib/proc';
import { int } from './lib/report';
import { createToken, startApp, startFloor } from './lib/servers';
import { abPhase, floorCheckPhase } from './phases/ab';
import { browserPhase } from './phases/browser';
import { coldPhase } from './phases/cold';
import { instancesPhase } from './phases/instances';
import { memoryPhase } from './phases/memory';
import { profilePhase } from './phases/profile';
import { scalePhase } from './phases/scale';

// ---------------------------------------------------------------------------------------------------------
// The contract check: the floor is only a floor if it answers what the app answers.

/** Headers whose values differ per answer or per connection; compared by presence only. */
const VARYING_HEADERS = new Set(['date', 'x-request-id', 'keep-alive', 'connection']);

type Answer = { status: number; body: string; headers: Record<string, string> };

async function call(server: Server, token: string | null, method: string, url: string, body?: string): Promise<Answer> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(server.baseUrl + url, { method, headers, body });
  const seen: Record<string, string> = {};
  response.headers.forEach((value, name) => (seen[name] = VARYING_HEADERS.has(name) ? '…' : value.replace(server.baseUrl, '<base>')));
  return { status: response.status, body: await response.text(), headers: seen };
}

/**
 * The app (or a baseline) and the floor answer alike: status, body and every header but the varying ones
 * (strict: a header the app adds must be added to the floor too); a baseline of another commit may differ
 * in headers (`strictHeaders` false: only status, body, Link and Content-Type count).
 */
async function contractCheck(subject: Server, floor: Server, token: string, data: BenchDb, nextCreateId: () => bigint, strictHeaders: boolean): Promise<void> {
  const same = (what: string, a: Answer, b: Answer, expectedStatus: number) => {
    const headersOf = (answer: Answer) =>
      JSON.stringify(
        strictHeaders
          ? Object.fromEntries(Object.entries(answer.headers).sort())
          : { link: answer.headers.link?.replace('<base>', ''), 'content-type': answer.headers['content-type'] },
      );
    if (a.status !== expectedStatus || b.status !== expectedStatus || a.body !== b.body || headersOf(a) !== headersOf(b)) {
      throw new Error(`contract check failed for ${what}:\n  ${subject.name}: ${JSON.stringify(a)}\n  floor: ${JSON.stringify(b)}`);
    }
  };
  for (const query of ['limit=20', `limit=20&after=${data.seededId(500)}`, 'limit=1000', `limit=5&after=${data.seededId(997)}`]) {
    same(`GET /api/plants?${query}`, await call(subject, token, 'GET', `/api/plants?${query}`), await call(floor, token, 'GET', `/api/plants?${query}`), 200);
  }
  same('GET /api/plants without a token', await call(subject, null, 'GET', '/api/plants'), await call(floor, null, 'GET', '/api/plants'), 401);
  // A plant with every declared field (shared/plants.ts, `plantFields`), created and listed by each: the floors
  // read, write and answer each field as the app does.
  const [subjectId, floorId] = [nextCreateId(), nextCreateId()];
  const everyField = (id: bigint) => `{"id": ${id}, ${PLANT_FIELD_NAMES.map((field) => `${JSON.stringify(field)}: ${JSON.stringify(exampleOf(field))}`).join(', ')}}`;
  const asSubject = (answer: Answer) => ({ ...answer, body: answer.body.replaceAll(String(floorId), String(subjectId)) });
  const created = [await call(subject, token, 'POST', '/api/plants', everyField(subjectId)), await call(floor, token, 'POST', '/api/plants', everyField(floorId))] as const;
  same('POST /api/plants', created[0], asSubject(created[1]), 200);
  if (!(await data.exists(subjectId)) || !(await data.exists(floorId))) throw new Error('contract check: a created plant is not in the database');
  for (const id of [subjectId, floorId]) {
    const query = `limit=1&after=${id - 1n}`;
    same(`GET /api/plants?${query} (a plant just created)`, await call(subject, token, 'GET', `/api/plants?${query}`), await call(floor, token, 'GET', `/api/plants?${query}`), 200);
  }
  same('DELETE /api/plants/{id}', await call(subject, token, 'DELETE', `/api/plants/${subjectId}`), await call(floor, token, 'DELETE', `/api/plants/${floorId}`), 204);
  const again = await call(floor, token, 'DELETE', `/api/plants/${floorId}`);
  same(
    'DELETE /api/plants/{id} again',
    await call(subject, token, 'DELETE', `/api/plants/${subjectId}`),
    { ...again, body: again.body.replace(String(floorId), String(subjectId)) },
    404,
  );
  // Refusals: the same status and error value (the floor's words may be simpler than the app's).
  const refusals: [what: string, method: string, url: string, body: string | undefined, status: number][] = [
    ['a limit out of range', 'GET', '/api/plants?limit=0', undefined, 400],
    ['an after that is not an integer', 'GET', '/api/plants?after=x', undefined, 400],
    ['a body that is not JSON', 'POST', '/api/plants', '{"id": 1,', 400],
    ['a body that is not an object', 'POST', '/api/plants', '[]', 400],
    ['a create without a name', 'POST', '/api/plants', '{"id": 1}', 400],
    ['a create with an unknown field', 'POST', '/api/plants', '{"id": 1, "name": "x", "colour": "green"}', 400],
    ['a body over the limit', 'POST', '/api/plants', `{"id": 1, "name": "${'x'.repeat(BODY_LIMIT_BYTES)}"}`, 413],
    ['a path id that is not an integer', 'DELETE', '/api/plants/abc', undefined, 400],
    ['a method the path does not take', 'PUT', '/api/plants', undefined, 405],
  ];
  for (const [what, method, url, body, status] of refusals) {
    const [a, b] = [await call(subject, token, method, url, body), await call(floor, token, method, url, body)];
    const valueOf = (answer: Answer) => (JSON.parse(answer.body) as { error?: number }).error;
    if (a.status !== status || b.status !== status || valueOf(a) !== valueOf(b)) {
      throw new Error(`contract check failed for ${what} (${method} ${url.slice(0, 60)}):\n  ${subject.name}: ${a.status} ${a.body.slice(0, 200)}\n  floor: ${b.status} ${b.body.slice(0, 200)}`);
    }
  }
}

/** Without a floor (PostgreSQL): the app's own answers make sense. */
async function sanityCheck(app: Server, token: string): Promise<void> {
  const page = await call(app, token, 'GET', '/api/plants?limit=20');
  if (page.status !== 200 || (JSON.parse(page.body) as unknown[]).length !== 20 || !page.headers.link) throw new Error(`sanity check: the first page is not a full one: ${JSON.stringify(page)}`);
  const anonymous = await call(app, null, 'GET', '/api/plants');
  if (anonymous.status !== 401) throw new Error(`sanity check: a request without a token answered ${anonymous.status}`);
}

// ---------------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  const loadAtStart = os.loadavg();
  const cores = os.cpus().length;
  console.log(`# Plant Store benchmark (${options.quick ? 'quick' : 'full'} run, ${options.engine}; phases: ${[...options.phases].join(', ') || 'none'})`);
  console.log(`load average ${loadAtStart.map((n) => n.toFixed(2)).join(' ')} on ${cores} cores`);
  if (loadAtStart[0]! > cores * 0.25) console.log(`!! the machine is busy (1-minute load ${loadAtStart[0]!.toFixed(2)}): figures will be noisy`);
  console.log('(the load average during and after the run includes the run itself: about 2 on 2 cores)');

  const checkout = checkoutAt(projectRoot);
  if (checkout.kind !== 'compiled') throw new Error('this bench runs the compiled server (src/server/main.ts); an older checkout can only be a --baseline');
  const baselines = options.baselines.map((dir) => checkoutAt(dir));
  const buildSeconds = ensureBuild(checkout, options.rebuild) + baselines.reduce((total, baseline) => total + ensureBuild(baseline, options.rebuild), 0);
  const scripts = await bundleBenchServers();

  const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-bench-'));
  const running = new Set<Server>();
  const failures: string[] = [];
  const results: Record<string, unknown> = {};
  const report: string[] = [];
  let data: BenchDb | undefined;
  let postgres: PrivatePostgres | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;

  const stopAll = async () => {
    await Promise.all([...running].map((server) => server.stop()));
    running.clear();
  };
  const cleanUp = async () => {
    await stopAll();
    await data?.close().catch(() => {});
    await dropDatabase?.().catch((error: unknown) => console.error(`could not drop the bench database: ${String(error)}`));
    postgres?.stop();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  };
  const onSignal = () => {
    console.error('\ninterrupted: stopping the servers this run started');
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    // --- setup --------------------------------------------------------------------------------------------
    let databaseUrl = `file:${path.join(dir, 'bench.db')}`;
    if (options.engine === 'postgresql') {
      let serverUrl = options.databaseUrl;
      if (!serverUrl) {
        console.log('starting a private PostgreSQL server (initdb) …');
        postgres = await startPrivatePostgres();
        serverUrl = postgres.url;
      }
      const database = await createPostgresDatabase(serverUrl, 'plant_store_bench_');
      databaseUrl = database.url;
      dropDatabase = database.drop;
    }
    const appPort = await freePort();
    const spawnedAt = performance.now();
    const app = startApp({ name: 'app', checkout, port: appPort, databaseUrl });
    running.add(app);
    const firstStartMs = await waitFor200(app, '/api/health', spawnedAt);
    const token = createToken(checkout, databaseUrl, 'bench', 'member');
    data = options.engine === 'sqlite' ? openSqliteBenchDb(databaseUrl.slice('file:'.length)) : await openPostgresBenchDb(databaseUrl);
    const memberId = await data.userId('bench');
    await data.seedUpTo(memberId, 1000);
    const runner = makeRunner(options, data, memberId, token, failures);

    let floor: Server | null = null;
    let stack: Server | null = null;
    if (options.engine === 'sqlite') {
      floor = startFloor('floor', scripts.floor, await freePort(), databaseUrl);
      running.add(floor);
      await waitFor200(floor, '/api/health', performance.now(), 30_000);
      await contractCheck(app, floor, token, data, runner.nextCreateId, true);
      stack = startFloor('stack', scripts.stackFloor, await freePort(), databaseUrl);
      running.add(stack);
      await waitFor200(stack, '/api/health', performance.now(), 30_000);
      await contractCheck(stack, floor, token, data, runner.nextCreateId, true);
    } else {
      await sanityCheck(app, token);
    }
    const bases: Server[] = [];
    for (const [index, baseline] of baselines.entries()) {
      const base = startApp({ name: baselines.length === 1 ? 'base' : `base${index + 1}`, checkout: baseline, port: await freePort(), databaseUrl });
      running.add(base);
      bases.push(base);
      await waitFor200(base, '/api/health', performance.now());
      if (floor) await contractCheck(base, floor, token, data, runner.nextCreateId, false);
      else await sanityCheck(base, token);
      console.log(`baseline ${base.name} (${baseline.kind === 'compiled' ? 'compiled' : 'Next.js under tsx'}) pid ${base.pid} from ${baseline.dir}`);
    }
    console.log(`app pid ${app.pid} (children: ${descendants(app.pid).length})${floor ? `, floor pid ${floor.pid}` : ''}${stack ? `, stack floor pid ${stack.pid}` : ''}; database ${databaseUrl.replace(/\/\/[^@/]*@/, '//…@')}`);
    console.log(`first start on an empty database (migrations, first admin): ${int(firstStartMs)} ms; ${floor ? 'contract check passed (bodies and headers)' : 'sanity check passed'}`);
    results.setup = { buildSeconds, firstStartMs: Math.round(firstStartMs), engine: options.engine, baselines: baselines.map(({ dir, kind }) => ({ dir, kind })) };

    const ctx: Context = {
      options,
      checkout,
      baselines,
      dir,
      databaseUrl,
      data,
      token,
      memberId,
      firstStartMs,
      app,
      bases,
      floor,
      stack,
      scripts,
      running,
      failures,
      results,
      report,
      ...runner,
    };

    if (options.phases.has('ab')) await abPhase(ctx);
    if (options.floorCheck) await floorCheckPhase(ctx);
    if (options.phases.has('scale')) await scalePhase(ctx);
    if (options.profile) await profilePhase(ctx);
    // The private server's postmaster, whose tree's CPU is PostgreSQL's share of a request (a server of yours: not measured).
    if (options.phases.has('instances')) await instancesPhase(ctx, postgres ? Number(readFileSync(path.join(postgres.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined);
    // The rest starts servers of its own: the machine is left to them.
    await stopAll();
    if (options.phases.has('memory')) await memoryPhase(ctx);
    if (options.phases.has('cold')) await coldPhase(ctx);
    if (options.phases.has('browser')) await browserPhase(ctx);
  } catch (error) {
    // A server that dies or a check that fails ends the run; what was measured so far is still reported.
    failures.push(`the run was aborted: ${error instanceof Error ? error.message : String(error)}`);
    console.error(error);
  } finally {
    await cleanUp();
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
    options: { ...options, phases: [...options.phases] },
  };
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify({ meta, ...results, failures }, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`);

  console.log(`\n## Results (${meta.mode} run, ${options.engine}, ${meta.seconds} s; commit ${meta.commit}${meta.uncommittedFiles ? ` + ${meta.uncommittedFiles} uncommitted files` : ''}; node ${meta.node}; ${meta.cpus})`);
  console.log(`load average at start ${meta.loadAtStart.join(' ')}, at end ${meta.loadAtEnd.join(' ')} (the end includes this run)`);
  if (options.quick) console.log('A --quick run proves the tooling works; its figures are too short to quote.');
  console.log('');
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
