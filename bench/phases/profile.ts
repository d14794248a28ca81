/**
 * --profile: a second app, and on SQLite a second stack floor, started with --cpu-prof get each workload for a
 * few seconds, one after the other; self and inclusive time are summed by package / source file (the bundle's
 * frames mapped through its source maps) and by function, per workload (start-up and warm-up cut out by time).
 * Beside the stack floor, the same places in CPU µs per request: what the app spends where the stack floor
 * does not (a differential view; shares alone hide that the app's whole is larger). The profiles are copied to
 * bench/results/app.cpuprofile and stack.cpuprofile (Chrome DevTools → Performance, or VS Code).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

import type { Context, RunRecord } from '../lib/context';
import type { Workload } from '../lib/load';
import { benchDir, projectRoot } from '../lib/paths';
import { freePort, type Server, waitFor200 } from '../lib/proc';
import { type ProfileSummary, summariseProfile } from '../lib/profile';
import { fixed, int, table } from '../lib/report';
import { startApp, startFloor } from '../lib/servers';

const WORKLOADS = ['list', 'listFresh', 'create', 'delete'] as const satisfies Workload[];

type Profiled = ProfileSummary & { reqPerSec: number; requests: number };

/** One server under --cpu-prof: each workload for `seconds`, after a short warm-up; a summary per workload. */
async function profileServer(ctx: Context, name: 'app' | 'stack', workloads: Workload[]): Promise<{ file: string; summaries: Record<string, Profiled> }> {
  const profileDir = path.join(ctx.dir, `profile-${name}`);
  mkdirSync(profileDir);
  const port = await freePort();
  const spawned = performance.now();
  const nodeFlags = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const profiled: Server =
    name === 'app'
      ? startApp({ name: 'app', checkout: ctx.checkout, port, databaseUrl: ctx.databaseUrl, nodeFlags })
      : startFloor('stack', ctx.scripts.stackFloor, port, ctx.databaseUrl, nodeFlags);
  ctx.running.add(profiled);
  const windows: { workload: Workload; from: number; to: number; record: RunRecord }[] = [];
  try {
    await waitFor200(profiled, '/api/health', spawned);
    for (const workload of workloads) await ctx.run(profiled, workload, 2, 0);
    for (const workload of workloads) {
      const from = performance.now() - spawned;
      const record = await ctx.run(profiled, workload, ctx.options.profileSeconds, 0);
      windows.push({ workload, from, to: performance.now() - spawned, record });
      ctx.line(record, `profile ${workload}`);
    }
  } finally {
    await profiled.stop();
    ctx.running.delete(profiled);
  }
  const written = readdirSync(profileDir).find((file) => file.endsWith('.cpuprofile'));
  if (!written) throw new Error(`the profiled ${name} wrote no .cpuprofile`);
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.cpuprofile`);
  copyFileSync(path.join(profileDir, written), file);
  const summaries: Record<string, Profiled> = {};
  for (const window of windows) {
    const requests = window.record.reqPerSec * ctx.options.profileSeconds;
    summaries[window.workload] = { ...summariseProfile(file, window.from, window.to, 40), reqPerSec: window.record.reqPerSec, requests };
  }
  return { file, summaries };
}

/** CPU µs per request of a place (or of the whole, busy time). */
const perRequest = (ms: number, summary: Profiled) => (ms * 1000) / (summary.requests || 1);
/** A profile's ten largest functions by self time, as a table under `title`. */
const topFunctions = (title: string, summary: Profiled) =>
  table(
    [title, 'share'],
    summary.byFunction.slice(0, 10).map((entry) => [entry.fn, `${fixed(entry.share, 1)} %`]),
    ['l', 'r'],
  );

export async function profilePhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  const workloads: Workload[] = WORKLOADS.filter((workload) => options.workloads.has(workload));
  console.log(`\n## Profile: the app${ctx.stack ? ' and the stack floor' : ''} under --cpu-prof, ${options.profileSeconds} s per workload`);
  const app = await profileServer(ctx, 'app', workloads);
  const stack = ctx.stack ? await profileServer(ctx, 'stack', workloads) : undefined;
  ctx.results.profile = {
    file: path.relative(projectRoot, app.file),
    stackFile: stack && path.relative(projectRoot, stack.file),
    seconds: options.profileSeconds,
    summaries: app.summaries,
    stackSummaries: stack?.summaries,
  };
  ctx.report.push(`### Where the app spends its CPU (self time, --cpu-prof; ${options.profileSeconds} s per workload; idle left out)`, '');
  for (const [workload, summary] of Object.entries(app.summaries)) {
    ctx.report.push(
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
      topFunctions('top functions (self)', summary),
      '',
    );
  }
  if (!stack) return;
  ctx.report.push('### The app beside the stack floor: self time in CPU µs per request, by place (largest difference first)', '');
  for (const [workload, summary] of Object.entries(app.summaries)) {
    const floor = stack.summaries[workload];
    if (!floor) continue;
    const places = new Set([...summary.byPlace, ...floor.byPlace].map((entry) => entry.place));
    const rows = [...places]
      .map((place) => {
        const appUs = perRequest(summary.byPlace.find((entry) => entry.place === place)?.ms ?? 0, summary);
        const stackUs = perRequest(floor.byPlace.find((entry) => entry.place === place)?.ms ?? 0, floor);
        return { place, appUs, stackUs };
      })
      .sort((a, b) => b.appUs - b.stackUs - (a.appUs - a.stackUs));
    const busy = (s: Profiled) => perRequest(s.totalMs - s.idleMs, s);
    ctx.report.push(
      `**${workload}**: app ${int(busy(summary))} µs per request (${int(summary.reqPerSec)} req/s under the profiler), stack floor ${int(busy(floor))} µs (${int(floor.reqPerSec)} req/s); places outside either's top 40 count as 0`,
      '',
      table(
        ['where (self)', 'app µs/req', 'stack µs/req', 'app − stack'],
        rows.slice(0, 20).map((row) => [row.place, fixed(row.appUs, 1), fixed(row.stackUs, 1), fixed(row.appUs - row.stackUs, 1)]),
        ['l', 'r', 'r', 'r'],
      ),
      '',
      topFunctions('stack floor: top functions (self)', floor),
      '',
    );
  }
}
