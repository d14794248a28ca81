/**
 * A/B: list limit=20 (the same request again, and each time a new query: listFresh), create, delete at N
 * connections, app (and base) against the stack floor and the floor, in rounds; then the list answered 304
 * (If-None-Match) against the floor's plain list. Each round measures every server once, back to back, and
 * the order flips from one round to the next (app, stack, floor | floor, stack, app), so a slow minute of
 * the machine and the advantage of going first or last fall on all alike. A round's ratios are taken from its own runs; the spread of those ratios across the rounds says
 * whether a figure holds.
 */
import { freePort, type Server, waitFor200 } from '../lib/proc';
import type { Context, RunRecord } from '../lib/context';
import type { Workload } from '../lib/load';
import { fixed, int, mb, mean, table } from '../lib/report';
import { startCeiling } from '../lib/servers';

const WORKLOADS = ['list', 'listFresh', 'create', 'delete'] as const;
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
    unexpected: records.reduce((total, r) => total + r.unexpected, 0),
    status5xx: records.reduce((total, r) => total + r.status5xx, 0),
  };
}

/** Rounds of `workloads` over `servers`, the order flipping each round; every record is checked and kept. */
/** One row of the A/B table: what each server is sent in it (a floor gets the plain list beside the app's 304s). */
type Slot = { slot: string; runs: { server: Server; workload: Workload }[] };

/** Rounds of each slot, its servers' order flipping each round; every record is checked and kept. */
async function rounds(ctx: Context, slots: Slot[], phase: string, records: RunRecord[]) {
  const { options } = ctx;
  for (const { slot, runs } of slots) {
    for (const { server, workload } of runs) {
      const record = await ctx.run(server, workload, options.warmSeconds, 0);
      ctx.check(record, `${phase} warm-up`);
      ctx.line(record, `warm ${slot}`);
    }
  }
  for (const { slot, runs } of slots) {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? runs : [...runs].reverse();
      for (const { server, workload } of order) {
        const record = { ...(await ctx.run(server, workload, options.seconds, round)), slot };
        ctx.check(record, phase);
        records.push(record);
        ctx.line(record, `${slot} r${round}`);
      }
    }
  }
}

/** Whether a server answers the list with an ETag (a baseline from before conditional requests does not). */
async function answersEtag(ctx: Context, server: Server): Promise<boolean> {
  const page = await fetch(`${server.baseUrl}/api/plants?limit=20`, { headers: { authorization: `Bearer ${ctx.token}` } });
  await page.arrayBuffer();
  return page.headers.has('etag');
}

/** The goals each figure is held to (docs/performance.md, "Goals and where each stands"). */
export const GOALS = { ofStackFloor: 0.9, conditionalOfFloor: 0.8, listP99Ms: 25 } as const;

export async function abPhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  const apps = [ctx.app, ...ctx.bases];
  const servers = [...apps, ...(ctx.stack ? [ctx.stack] : []), ...(ctx.floor ? [ctx.floor] : [])];
  const slots: Slot[] = WORKLOADS.filter((workload) => options.workloads.has(workload)).map((workload) => ({ slot: workload, runs: servers.map((server) => ({ server, workload })) }));
  // The 304 list: the app (and a baseline that keeps ETags) answering If-None-Match, the floor its plain list.
  const conditional = [];
  if (options.workloads.has('list304')) for (const server of apps) if (await answersEtag(ctx, server)) conditional.push({ server, workload: 'list304' as const });
  if (conditional.length > 0) slots.push({ slot: 'list304', runs: [...conditional, ...(ctx.floor ? [{ server: ctx.floor, workload: 'list' as const }] : [])] });
  console.log(`\n## A/B: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s per server and workload (warm-up ${options.warmSeconds} s each)`);
  const runs: RunRecord[] = [];
  // Filled as the runs come in, so an aborted run still reports them.
  ctx.results.ab = { connections: options.connections, seconds: options.seconds, rounds: options.rounds, warmSeconds: options.warmSeconds, runs };
  await rounds(ctx, slots, 'A/B', runs);

  const of = (slot: string, name: string) => runs.filter((r) => r.slot === slot && r.server === name).sort((a, b) => a.round - b.round);
  const rate = (records: RunRecord[]) => records.map((r) => r.reqPerSec);
  const over = (subject: RunRecord[], reference: RunRecord[]) => (subject.length && reference.length ? ratioSpread(rate(subject), rate(reference)) : undefined);
  const names = servers.map((server) => server.name);
  const summary = slots.map(({ slot }) => {
    const records = Object.fromEntries(names.map((name) => [name, of(slot, name)]));
    const measured = names.filter((name) => records[name]!.length > 0);
    return {
      slot,
      servers: Object.fromEntries(measured.map((name) => [name, summarise(records[name]!)])),
      /** Each app's (and baseline's) ratio to the stack floor, and each server's to the floor, per round. */
      ofStack: Object.fromEntries(apps.map((server) => [server.name, over(records[server.name]!, records.stack ?? [])])),
      ofFloor: Object.fromEntries(names.filter((name) => name !== 'floor').map((name) => [name, over(records[name]!, records.floor ?? [])])),
      /** The app over each baseline, per round. */
      appOver: Object.fromEntries(ctx.bases.map((server) => [server.name, over(records.app!, records[server.name]!)])),
    };
  });
  ctx.results.ab = { ...(ctx.results.ab as object), summary };

  const rows: (string | number)[][] = [];
  for (const entry of summary) {
    for (const name of names) {
      const s = entry.servers[name];
      if (!s) continue;
      const ofStack = entry.ofStack[name];
      const ofFloor = entry.ofFloor[name];
      const sent = of(entry.slot, name)[0]?.workload;
      rows.push([
        entry.slot === 'list304' && sent !== 'list304' ? `${entry.slot} (${name}: plain list)` : entry.slot,
        name,
        int(s.reqPerSec),
        `${fixed(s.reqPerSecCv * 100, 1)} %`,
        fixed(s.p50),
        fixed(s.p99Median),
        fixed(s.p99),
        mb(s.peakRss),
        fixed(s.serverCpu),
        fixed(s.cpuMsPer1k, 1),
        `${s.unexpected}${s.status5xx ? ` (${s.status5xx} 5xx!)` : ''}`,
        fixed(s.otherCpu),
        ...(ctx.stack ? [ofStack ? spreadText(ofStack) : ''] : []),
        ...(ctx.floor ? [ofFloor ? spreadText(ofFloor) : ''] : []),
      ]);
    }
  }
  ctx.report.push(
    `### A/B: ${options.connections} connections, ${options.rounds} rounds × ${options.seconds} s, ${names.join(', ')} alternating (order flipped each round; warm-up ${options.warmSeconds} s)`,
    '',
    table(
      [
        ...['workload', 'server', 'req/s', 'req/s CV', 'p50 ms', 'p99 ms (median round)', 'p99 ms (worst)', 'peak RSS MB', 'server CPU', 'CPU ms/1k req', 'unexpected status', 'others CPU'],
        ...(ctx.stack ? ['/stack floor req/s: mean (per-round range, ±spread)'] : []),
        ...(ctx.floor ? ['/floor req/s: mean (per-round range, ±spread)'] : []),
      ],
      rows,
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
    ),
    '',
    'app: `npm start` with its defaults (request log on; the per-token rate limit set far above the load instead of off).',
    'stack: the stack floor (bench/stack-floor.ts: a tRPC procedure with zod input and output called through a caller,',
    "Prisma's client on the same adapter for the operation, the floor's token check, nothing else). floor: bare",
    'node:http + better-sqlite3 (bench/floor.ts). list304: the list with If-None-Match carrying its current ETag; the',
    'floor answers its plain list in the same rounds, so app/floor there is "a 304 against the bare plain list".',
    'listFresh: the same page, each request with a query no recent one had (after=-N), so the app, which keeps a',
    "plain list's answer for its ETag on SQLite (src/server/http/rest/kept-answers.ts), runs the list's query each time.",
    "req/s and p50: mean of the rounds; req/s CV: the rounds' standard deviation over their mean. /stack floor and",
    "/floor: each round's own ratio (the servers measured back to back), their mean, lowest and highest, and ± the",
    'largest distance of a round from the mean: "holds" when within ±10 %. peak RSS: VmRSS sampled every 250 ms.',
    'server CPU: CPU seconds per second (1.00 = one core); others CPU: cores busy with anything but the server and',
    'autocannon meanwhile (worst round): well above 0 means noise.',
    '',
  );
  for (const base of ctx.bases) {
    const entries = summary.filter((entry) => entry.appOver[base.name]);
    if (entries.length === 0) continue;
    const cpu = (entry: (typeof summary)[number], name: string) => entry.servers[name]?.cpuMsPer1k ?? Number.NaN;
    ctx.report.push(
      `app/${base.name} req/s per round: ${entries.map((entry) => `${entry.slot} ${spreadText(entry.appOver[base.name]!)}`).join('; ')}`,
      `app/${base.name} CPU per request: ${entries.map((entry) => `${entry.slot} ${fixed(cpu(entry, base.name), 1)} → ${fixed(cpu(entry, 'app'), 1)} ms/1k (×${fixed(cpu(entry, 'app') / cpu(entry, base.name), 3)})`).join('; ')}`,
      '',
    );
  }
  const goals: string[] = [];
  const verdict = (met: boolean) => (met ? 'meets' : 'misses');
  for (const entry of summary) {
    const parts: string[] = [];
    const ofStack = entry.ofStack.app;
    const app = entry.servers.app!;
    if (entry.slot !== 'list304' && ofStack) {
      parts.push(`app/stack floor ${fixed(ofStack.mean)} ${verdict(ofStack.mean >= GOALS.ofStackFloor)} ≥ ${GOALS.ofStackFloor}${ofStack.holds ? ' (holds within ±10 %)' : ' (does not hold within ±10 %)'}`);
    }
    if (entry.slot !== 'list304' && entry.ofFloor.stack) parts.push(`the stack floor itself is ${fixed(entry.ofFloor.stack.mean)} of the bare floor`);
    if (entry.slot === 'list304' && entry.ofFloor.app) {
      parts.push(`304 list / bare floor's plain list ${fixed(entry.ofFloor.app.mean)} ${verdict(entry.ofFloor.app.mean >= GOALS.conditionalOfFloor)} ≥ ${GOALS.conditionalOfFloor}`);
    }
    if (entry.slot === 'list') parts.push(`p99 ${fixed(app.p99Median)} ms (median round) ${verdict(app.p99Median < GOALS.listP99Ms)} < ${GOALS.listP99Ms} ms`);
    if (parts.length) goals.push(`- ${entry.slot}: ${parts.join('; ')}`);
  }
  if (goals.length) ctx.report.push('Goals:', ...goals, '');
  if (!ctx.floor) ctx.report.push(`(No floors on ${options.engine}: both floors run on SQLite.)`, '');
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
    await rounds(ctx, [{ slot: 'list', runs: [ctx.floor, ceiling].map((server) => ({ server, workload: 'list' as const })) }], 'floor check', runs);
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
