/**
 * A/B: list limit=20, create, delete at N connections, app (and base) against the floor, in rounds. Each
 * round measures every server once, back to back, and the order flips from one round to the next (app,
 * floor | floor, app), so a slow minute of the machine and the advantage of going first or second fall on
 * both alike. A round's app/floor ratio is taken from its own two runs; the spread of those ratios across
 * the rounds says whether the figure holds.
 */
import { freePort, type Server, waitFor200 } from '../lib/proc';
import type { Context, RunRecord } from '../lib/context';
import type { Workload } from '../lib/load';
import { fixed, int, mb, mean, table } from '../lib/report';
import { startCeiling } from '../lib/servers';

const WORKLOADS: Workload[] = ['list', 'create', 'delete'];
/** A ratio "holds" when every round's ratio is within this of their mean. */
const HOLD_WITHIN = 0.1;

type RatioSpread = { mean: number; min: number; max: number; plusMinus: number; perRound: number[]; holds: boolean };

/** Per-round ratios a/b; their mean, range and the largest distance from the mean as a share of it. */
function ratioSpread(a: number[], b: number[]): RatioSpread {
  const perRound = a.map((value, i) => value / b[i]!);
  const average = mean(perRound);
  const plusMinus = Math.max(...perRound.map((ratio) => Math.abs(ratio - average))) / average;
  const round3 = (value: number) => Math.round(value * 1000) / 1000;
  return {
    mean: round3(average),
    min: round3(Math.min(...perRound)),
    max: round3(Math.max(...perRound)),
    plusMinus: round3(plusMinus),
    perRound: perRound.map(round3),
    holds: perRound.length >= 2 && plusMinus <= HOLD_WITHIN,
  };
}

const spreadText = (spread: RatioSpread) =>
  `${fixed(spread.mean)} (rounds ${fixed(spread.min)}–${fixed(spread.max)}, ±${fixed(spread.plusMinus * 100, 1)} %${spread.holds ? '' : ' > ±10 %: does not hold'})`;

const cv = (values: number[]) => {
  const average = mean(values);
  return Math.sqrt(mean(values.map((value) => (value - average) ** 2))) / average;
};

function summarise(records: RunRecord[]) {
  return {
    reqPerSec: Math.round(mean(records.map((r) => r.reqPerSec))),
    /** Coefficient of variation of req/s across the rounds. */
    reqPerSecCv: Math.round(cv(records.map((r) => r.reqPerSec)) * 1000) / 1000,
    p50: Math.round(mean(records.map((r) => r.latencyMs.p50)) * 100) / 100,
    p99: Math.max(...records.map((r) => r.latencyMs.p99)),
    p99Median: records.map((r) => r.latencyMs.p99).sort((x, y) => x - y)[Math.floor(records.length / 2)]!,
    peakRss: Math.max(...records.map((r) => r.peakRss)),
    hwmAfter: Math.max(...records.map((r) => r.hwmAfter)),
    serverCpu: Math.round(mean(records.map((r) => r.serverCpu)) * 100) / 100,
    cpuMsPer1k: Math.round(mean(records.map((r) => r.cpuMsPer1k)) * 10) / 10,
    otherCpu: Math.max(...records.map((r) => r.otherCpu)),
    non2xx: records.reduce((total, r) => total + r.non2xx, 0),
    status5xx: records.reduce((total, r) => total + r.status5xx, 0),
  };
}

/** Rounds of `workloads` over `servers`, the order flipping each round; every record is checked and kept. */
async function rounds(ctx: Context, servers: Server[], workloads: { workload: Workload; query?: string }[], phase: string, runs: RunRecord[]) {
  const { options } = ctx;
  for (const server of servers) {
    for (const { workload, query } of workloads) {
      const record = await ctx.run(server, workload, options.warmSeconds, 0, query);
      ctx.check(record, `${phase} warm-up`);
      ctx.line(record, `warm ${workload}`);
    }
  }
  for (const { workload, query } of workloads) {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? servers : [...servers].reverse();
      for (const server of order) {
        const record = await ctx.run(server, workload, options.seconds, round, query);
        ctx.check(record, phase);
        runs.push(record);
        ctx.line(record, `${workload} r${round}`);
      }
    }
  }
}

export async function abPhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  const servers = [ctx.app, ...(ctx.base ? [ctx.base] : []), ...(ctx.floor ? [ctx.floor] : [])];
  console.log(`\n## A/B: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s per server and workload (warm-up ${options.warmSeconds} s each)`);
  const runs: RunRecord[] = [];
  // Filled as the runs come in, so an aborted run still reports them.
  ctx.results.ab = { connections: options.connections, seconds: options.seconds, rounds: options.rounds, warmSeconds: options.warmSeconds, runs };
  await rounds(ctx, servers, WORKLOADS.map((workload) => ({ workload })), 'A/B', runs);

  const of = (workload: Workload, name: string) => runs.filter((r) => r.workload === workload && r.server === name).sort((a, b) => a.round - b.round);
  const summary = WORKLOADS.map((workload) => {
    const app = of(workload, 'app');
    const floor = of(workload, 'floor');
    const base = of(workload, 'base');
    return {
      workload,
      app: summarise(app),
      ...(floor.length ? { floor: summarise(floor), ratio: ratioSpread(app.map((r) => r.reqPerSec), floor.map((r) => r.reqPerSec)) } : {}),
      ...(base.length ? { base: summarise(base) } : {}),
      ...(base.length && floor.length ? { baseRatio: ratioSpread(base.map((r) => r.reqPerSec), floor.map((r) => r.reqPerSec)) } : {}),
      ...(base.length ? { appOverBase: ratioSpread(app.map((r) => r.reqPerSec), base.map((r) => r.reqPerSec)) } : {}),
    };
  });
  ctx.results.ab = { ...(ctx.results.ab as object), summary };

  const rows: (string | number)[][] = [];
  for (const entry of summary) {
    for (const name of ['app', 'base', 'floor'] as const) {
      const s = entry[name];
      if (!s) continue;
      const ratio = name === 'app' ? entry.ratio : name === 'base' ? entry.baseRatio : undefined;
      rows.push([
        entry.workload,
        name,
        int(s.reqPerSec),
        `${fixed(s.reqPerSecCv * 100, 1)} %`,
        fixed(s.p50),
        fixed(s.p99Median),
        fixed(s.p99),
        mb(s.peakRss),
        fixed(s.serverCpu),
        fixed(s.cpuMsPer1k, 1),
        `${s.non2xx}${s.status5xx ? ` (${s.status5xx} 5xx!)` : ''}`,
        fixed(s.otherCpu),
        ...(ctx.floor ? [ratio ? spreadText(ratio) : ''] : []),
      ]);
    }
  }
  const who = [ctx.app, ctx.base, ctx.floor].filter(Boolean).map((server) => server!.name).join(', ');
  ctx.report.push(
    `### A/B: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s, ${who} alternating (order flipped each round; warm-up ${options.warmSeconds} s)`,
    '',
    table(
      [
        ...['workload', 'server', 'req/s', 'req/s CV', 'p50 ms', 'p99 ms (median round)', 'p99 ms (worst)', 'peak RSS MB', 'server CPU', 'CPU ms/1k req', 'non-2xx', 'others CPU'],
        ...(ctx.floor ? ['/floor req/s: mean (per-round range, ±spread)'] : []),
      ],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
    '',
    "req/s and p50: mean of the rounds; req/s CV: the rounds' standard deviation over their mean. /floor: each round's",
    'own ratio (the app and the floor measured back to back), their mean, lowest and highest, and ± the largest distance',
    'of a round from the mean: "holds" when within ±10 %. peak RSS: VmRSS sampled every 250 ms. server CPU: CPU',
    'seconds per second (1.00 = one core); others CPU: cores busy with anything but the server and autocannon',
    'meanwhile (worst round): well above 0 means noise.',
    '',
  );
  if (summary.some((entry) => entry.appOverBase)) {
    ctx.report.push(
      `app/base req/s per round: ${summary.filter((entry) => entry.appOverBase).map((entry) => `${entry.workload} ${spreadText(entry.appOverBase!)}`).join('; ')}`,
      '',
    );
  }
  if (ctx.floor) {
    const goals: Record<string, number> = { list: 0.5, create: 0.6, delete: 0.6 };
    ctx.report.push(
      'Goal (issue 12):',
      ...summary.map((entry) => {
        const parts = [`app/floor ${fixed(entry.ratio!.mean)} ${entry.ratio!.mean >= goals[entry.workload]! ? 'meets' : 'misses'} ≥ ${fixed(goals[entry.workload]!, 1)}`];
        if (entry.workload === 'list') parts.push(`p99 ${fixed(entry.app.p99Median)} ms (median round) ${entry.app.p99Median < 20 ? 'meets' : 'misses'} < 20 ms`);
        return `- ${entry.workload}: ${parts.join('; ')}`;
      }),
      '',
    );
  } else {
    ctx.report.push(`(No floor on ${options.engine}: the floor is node:http + better-sqlite3, SQLite only.)`, '');
  }
}

/** --floor-check: the floor against the ceiling (node:http answering a fixed page), list only, in rounds. */
export async function floorCheckPhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  if (!ctx.floor) return;
  const page = await fetch(`${ctx.floor.baseUrl}/api/plants?limit=20`, { headers: { authorization: `Bearer ${ctx.token}` } });
  const body = await page.text();
  const port = await freePort();
  const ceiling = startCeiling(ctx.scripts.ceiling, port, body);
  ctx.running.add(ceiling);
  try {
    await waitFor200(ceiling, '/api/plants', performance.now(), 30_000);
    console.log(`\n## Floor check: floor vs a minimal node:http handler answering the same page (${Buffer.byteLength(body)} bytes), list only`);
    const runs: RunRecord[] = [];
    await rounds(ctx, [ctx.floor, ceiling], [{ workload: 'list' }], 'floor check', runs);
    const floorRuns = runs.filter((r) => r.server === 'floor');
    const ceilingRuns = runs.filter((r) => r.server === ceiling.name);
    const spread = ratioSpread(floorRuns.map((r) => r.reqPerSec), ceilingRuns.map((r) => r.reqPerSec));
    const floorSummary = summarise(floorRuns);
    const ceilingSummary = summarise(ceilingRuns);
    ctx.results.floorCheck = { floor: floorSummary, ceiling: ceilingSummary, ratio: spread, runs };
    ctx.report.push(
      `### Floor check: the floor vs the ceiling (node:http answering the same 20-plant page with the same headers, no token check, no database), list, ${options.rounds} × ${options.seconds} s`,
      '',
      table(
        ['server', 'req/s', 'p50 ms', 'p99 ms (median round)', 'server CPU', 'CPU ms/1k req', 'client CPU'],
        [
          ['floor', int(floorSummary.reqPerSec), fixed(floorSummary.p50), fixed(floorSummary.p99Median), fixed(floorSummary.serverCpu), fixed(floorSummary.cpuMsPer1k, 1), fixed(mean(floorRuns.map((r) => r.clientCpu)))],
          ['ceiling', int(ceilingSummary.reqPerSec), fixed(ceilingSummary.p50), fixed(ceilingSummary.p99Median), fixed(ceilingSummary.serverCpu), fixed(ceilingSummary.cpuMsPer1k, 1), fixed(mean(ceilingRuns.map((r) => r.clientCpu)))],
        ],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
      '',
      `floor/ceiling req/s: ${spreadText(spread)}. The gap is the contract's own work per request (SHA-256 of the token, the`,
      "token and plant queries, the JSON); when the client's CPU is near 1.00 the ceiling measures autocannon, not node:http.",
      '',
    );
  } finally {
    await ceiling.stop();
    ctx.running.delete(ceiling);
  }
}
