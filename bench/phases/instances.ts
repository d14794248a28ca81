/**
 * Instances (PostgreSQL only; `--only=instances --engine=postgresql`, opt-in). Two parts, each in rounds whose
 * order flips every round:
 *
 * 1. One instance against two on the same database: list, listFresh and create at `--connections`, sent to one
 *    instance, or split evenly over two at once. Per instance: req/s, p99; per request: the instances' CPU and
 *    PostgreSQL's (the postmaster and its backends), and how busy the whole machine was.
 * 2. The shared rate-limit budget's cost per request beside the parent commit (`--baseline=DIR`, whose buckets
 *    are in the process): one instance each, the same database and policy. The policy gives a burst of 600 (the
 *    default), so a slice of 24 units topped up at half: a call to the budget per ~12 requests, refilled far
 *    above the load so nothing is refused; `app·s1` is this commit with a burst of 25, a slice of one unit: a
 *    call per request, the worst case.
 *
 * Every instance here is started by the phase, with its policy and a METRICS_TOKEN to read its budget calls.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { Context } from '../lib/context';
import { type Measurement, measure, type Workload } from '../lib/load';
import { freePort, machineBusySeconds, type Server, treeCpuSeconds, waitFor200 } from '../lib/proc';
import { fixed, int, mean, table } from '../lib/report';
import { startApp } from '../lib/servers';

const WORKLOADS = ['list', 'listFresh', 'create'] as const satisfies readonly Workload[];
const METRICS_TOKEN = 'bench-instances-metrics-token-0123456789abcdef';
/** The default burst, refilled far above any rate here: slices of 24, never a refusal. */
const SLICED_POLICY = '600/10000000';
/** A burst of 25: slices of one unit, so every request calls the budget. */
const EVERY_REQUEST_POLICY = '25/10000000';

/** The calls an instance made to the shared budget so far (its metrics); 0 for a build without them. */
async function budgetCalls(server: Server): Promise<number> {
  const response = await fetch(`${server.baseUrl}/api/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await response.text();
  return [...text.matchAll(/^plantstore_rate_budget_calls_total\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
}

type Run = {
  part: 'instances' | 'budget';
  setup: string;
  workload: Workload;
  round: number;
  perInstance: Measurement[];
  seconds: number;
  postgresCpu: number;
  machineBusy: number;
  budgetCalls: number;
  load1: number;
};

export async function instancesPhase(ctx: Context, postmaster: number | undefined): Promise<void> {
  const { options } = ctx;
  if (options.engine !== 'postgresql') {
    ctx.report.push('### Instances: skipped (PostgreSQL only: --engine=postgresql)', '');
    return;
  }
  const started: Server[] = [];
  const start = async (name: string, checkout = ctx.checkout, policy = SLICED_POLICY) => {
    const server = startApp({ name, checkout, port: await freePort(), databaseUrl: ctx.databaseUrl, env: { RATE_LIMIT_PER_TOKEN: policy, METRICS_TOKEN } });
    ctx.running.add(server);
    started.push(server);
    await waitFor200(server, '/api/health', performance.now());
    return server;
  };
  const runs: Run[] = [];
  ctx.results.instances = { connections: options.connections, seconds: options.seconds, rounds: options.rounds, runs };

  /** One measurement: `connections` split evenly over `servers`, all at once. */
  const once = async (part: Run['part'], setup: string, servers: Server[], workload: Workload, seconds: number, round: number): Promise<Run> => {
    const pgBefore = postmaster === undefined ? Number.NaN : treeCpuSeconds(postmaster);
    const machineBefore = machineBusySeconds();
    const callsBefore = await Promise.all(servers.map(budgetCalls));
    const startedAt = performance.now();
    const perInstance = await Promise.all(
      servers.map((server) =>
        measure({ server, workload, token: ctx.token, seconds, connections: Math.round(options.connections / servers.length), nextCreateId: ctx.nextCreateId }),
      ),
    );
    const elapsed = (performance.now() - startedAt) / 1000;
    const callsAfter = await Promise.all(servers.map(budgetCalls));
    const run: Run = {
      part,
      setup,
      workload,
      round,
      perInstance,
      seconds: elapsed,
      postgresCpu: postmaster === undefined ? Number.NaN : treeCpuSeconds(postmaster) - pgBefore,
      machineBusy: (machineBusySeconds() - machineBefore) / elapsed,
      budgetCalls: callsAfter.reduce((sum, after, index) => sum + after - callsBefore[index]!, 0),
      load1: Math.round(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) * 100) / 100,
    };
    for (const measured of perInstance) ctx.check({ ...measured, round, load1: run.load1 }, `instances ${setup}`);
    const responses = perInstance.reduce((sum, measured) => sum + measured.responses, 0);
    if (round > 0) runs.push(run);
    console.log(
      `${`${setup} ${workload}${round ? ` r${round}` : ' warm'}`.padEnd(28)} ${perInstance.map((measured) => int(measured.reqPerSec)).join(' + ')} req/s  p99 ${perInstance.map((measured) => fixed(measured.latencyMs.p99)).join('/')} ms  ` +
        `pg ${fixed((run.postgresCpu * 1000) / responses, 3)} ms/req  calls ${run.budgetCalls}  machine ${fixed(run.machineBusy)} cores  load ${run.load1}`,
    );
    return run;
  };

  const rounds = async (part: Run['part'], setups: { setup: string; servers: Server[] }[]) => {
    for (const workload of WORKLOADS) {
      for (const { setup, servers } of setups) await once(part, setup, servers, workload, options.warmSeconds, 0);
      for (let round = 1; round <= options.rounds; round++) {
        for (const { setup, servers } of round % 2 === 1 ? setups : [...setups].reverse()) await once(part, setup, servers, workload, options.seconds, round);
      }
    }
  };

  try {
    console.log(`\n## Instances: one against two on PostgreSQL, ${options.connections} connections in all, ${options.rounds} rounds × ${options.seconds} s`);
    const first = await start('one');
    const second = await start('two');
    await rounds('instances', [
      { setup: '1 instance', servers: [first] },
      { setup: '2 instances', servers: [first, second] },
    ]);
    await Promise.all([first.stop(), second.stop()]);

    const baseline = ctx.baselines[0];
    if (baseline) {
      console.log(`\n## The shared budget beside its parent (${path.basename(baseline.dir)}): one instance each, ${options.rounds} rounds × ${options.seconds} s`);
      const app = await start('app', ctx.checkout, SLICED_POLICY);
      const everyRequest = await start('app·s1', ctx.checkout, EVERY_REQUEST_POLICY);
      const base = await start('base', baseline, SLICED_POLICY);
      await rounds('budget', [
        { setup: 'app', servers: [app] },
        { setup: 'app·s1', servers: [everyRequest] },
        { setup: 'base', servers: [base] },
      ]);
    }
  } finally {
    await Promise.all(started.map(async (server) => {
      await server.stop();
      ctx.running.delete(server);
    }));
  }
  report(ctx, runs, postmaster !== undefined);
}

function report(ctx: Context, runs: Run[], postgresMeasured: boolean): void {
  const { options } = ctx;
  const responsesOf = (run: Run) => run.perInstance.reduce((sum, measured) => sum + measured.responses, 0);
  const summary = (part: Run['part']) => {
    const rows: (string | number)[][] = [];
    const setups = [...new Set(runs.filter((run) => run.part === part).map((run) => run.setup))];
    for (const workload of WORKLOADS) {
      for (const setup of setups) {
        const of = runs.filter((run) => run.part === part && run.setup === setup && run.workload === workload);
        if (of.length === 0) continue;
        const instances = of[0]!.perInstance.length;
        const total = mean(of.map((run) => run.perInstance.reduce((sum, measured) => sum + measured.reqPerSec, 0)));
        const appMsPerRequest = mean(of.map((run) => run.perInstance.reduce((sum, measured) => sum + measured.cpuMsPer1k * measured.responses, 0) / responsesOf(run) / 1000));
        const postgresMsPerRequest = mean(of.map((run) => (run.postgresCpu * 1000) / responsesOf(run)));
        rows.push([
          workload,
          setup,
          int(total),
          instances > 1 ? of[0]!.perInstance.map((_, index) => int(mean(of.map((run) => run.perInstance[index]!.reqPerSec)))).join(' + ') : int(total),
          fixed(Math.max(...of.flatMap((run) => run.perInstance.map((measured) => measured.latencyMs.p99)))),
          fixed(mean(of.flatMap((run) => run.perInstance.map((measured) => measured.latencyMs.p99)))),
          fixed(appMsPerRequest, 3),
          postgresMeasured ? fixed(postgresMsPerRequest, 3) : '–',
          postgresMeasured ? fixed(appMsPerRequest + postgresMsPerRequest, 3) : '–',
          part === 'budget' ? fixed(mean(of.map((run) => (run.budgetCalls * 1000) / responsesOf(run))), 0) : fixed(mean(of.map((run) => run.machineBusy))),
          `${Math.min(...of.map((run) => run.load1))}–${Math.max(...of.map((run) => run.load1))}`,
        ]);
      }
    }
    return rows;
  };
  const header = (last: string) => ['workload', 'setup', 'req/s', 'req/s per instance', 'p99 ms (worst)', 'p99 ms (mean)', 'app CPU ms/req', 'PostgreSQL CPU ms/req', 'CPU ms/req in all', last, 'load1'];
  const align: ('l' | 'r')[] = ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'];
  ctx.report.push(
    `### Instances on PostgreSQL: ${options.connections} connections in all (two instances: half each, at once), ${options.rounds} rounds × ${options.seconds} s, order flipped each round`,
    '',
    table(header('machine busy (cores)'), summary('instances'), align),
    '',
    'Every process shares the machine: the instances, PostgreSQL and autocannon. Where "machine busy" is near the',
    'number of cores, a second instance has no core of its own to run on, and its req/s shows what the cores allow,',
    'not what instances scale to; what it can show is what a request costs on each instance (CPU ms/req), and that',
    'this stays the same with two instances (nothing is shared between them but the database).',
    '',
  );
  if (runs.some((run) => run.part === 'budget')) {
    ctx.report.push(
      `### The shared rate-limit budget beside its parent: one instance each, ${options.rounds} rounds × ${options.seconds} s, order flipped each round`,
      '',
      table(header('budget calls per 1k req'), summary('budget'), align),
      '',
      `app: this commit, RATE_LIMIT_PER_TOKEN=${SLICED_POLICY} (the default burst: slices of 24 topped up at half, a call per ~12 requests). app·s1: this`,
      `commit, ${EVERY_REQUEST_POLICY} (slices of 1: a call per request, the worst case). base: the parent, ${SLICED_POLICY},`,
      'its bucket in the process. The difference in CPU ms/req is what the shared budget costs a request.',
      '',
    );
  }
}
