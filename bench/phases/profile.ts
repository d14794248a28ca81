/**
 * --profile: a second app started with --cpu-prof gets each workload for a few seconds; self and inclusive
 * time are summed by package / source file (the bundle's frames mapped through its source maps) and by
 * function, per workload (start-up and warm-up cut out by time). The profile is copied to
 * bench/results/app.cpuprofile (Chrome DevTools → Performance, or VS Code).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

import type { Context, RunRecord } from '../lib/context';
import type { Workload } from '../lib/load';
import { benchDir, projectRoot } from '../lib/paths';
import { freePort, waitFor200 } from '../lib/proc';
import { type ProfileSummary, summariseProfile } from '../lib/profile';
import { fixed, int, table } from '../lib/report';
import { startApp } from '../lib/servers';

const WORKLOADS: Workload[] = ['list', 'create', 'delete'];

export async function profilePhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  console.log(`\n## Profile: the app under --cpu-prof, ${options.profileSeconds} s per workload`);
  const profileDir = path.join(ctx.dir, 'profile');
  mkdirSync(profileDir);
  const port = await freePort();
  const spawned = performance.now();
  const profiled = startApp({ name: 'app', checkout: ctx.checkout, port, databaseUrl: ctx.databaseUrl, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] });
  ctx.running.add(profiled);
  const windows: { workload: Workload; from: number; to: number; record: RunRecord }[] = [];
  try {
    await waitFor200(profiled, '/api/health', spawned);
    for (const workload of WORKLOADS) await ctx.run(profiled, workload, 2, 0);
    for (const workload of WORKLOADS) {
      const from = performance.now() - spawned;
      const record = await ctx.run(profiled, workload, options.profileSeconds, 0);
      windows.push({ workload, from, to: performance.now() - spawned, record });
      ctx.line(record, `profile ${workload}`);
    }
  } finally {
    await profiled.stop();
    ctx.running.delete(profiled);
  }
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the profiled app wrote no .cpuprofile');
  const resultsDir = path.join(benchDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  copyFileSync(path.join(profileDir, file), path.join(resultsDir, 'app.cpuprofile'));
  const summaries: Record<string, ProfileSummary & { reqPerSec: number }> = {};
  for (const window of windows) {
    summaries[window.workload] = { ...summariseProfile(path.join(profileDir, file), window.from, window.to, 15), reqPerSec: window.record.reqPerSec };
  }
  ctx.results.profile = { file: path.relative(projectRoot, path.join(resultsDir, 'app.cpuprofile')), seconds: options.profileSeconds, summaries };
  ctx.report.push(`### Where the app spends its CPU (self time, --cpu-prof; ${options.profileSeconds} s per workload; idle left out)`, '');
  for (const [workload, summary] of Object.entries(summaries)) {
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
      table(
        ['top functions (self)', 'share'],
        summary.byFunction.slice(0, 10).map((entry) => [entry.fn, `${fixed(entry.share, 1)} %`]),
        ['l', 'r'],
      ),
      '',
    );
  }
}
