/**
 * Cold start: from spawn to the first 200 on /api/health, then an authenticated list, then the page `/`,
 * with the build and the database present: `npm start` as a person types it (npm, the prestart hook that
 * checks dist/BUILD_INFO.json, node dist/server.mjs) and node .bench-build/server.mjs alone. `npm start`
 * serves dist/: when this checkout has none, the bench makes it first (`npm run build`, what the prestart
 * hook would do on the first start), so the figure is a start with a build present.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import type { Context } from '../lib/context';
import { tsxCli } from '../lib/paths';
import { descendants, freePort, memory, startProcess, waitFor200 } from '../lib/proc';
import { int, mb, median, table } from '../lib/report';
import { appArgs, appCommandLine, appEnv } from '../lib/servers';

export async function coldPhase(ctx: Context): Promise<void> {
  const { options, checkout } = ctx;
  console.log(`\n## Cold start: existing build and database, ${options.coldRuns} run(s) each`);
  const notes: string[] = [];
  if (!existsSync(path.join(checkout.dir, 'dist', 'BUILD_INFO.json'))) {
    console.log('no dist/ build for `npm start`: running `npm run build` once (what its prestart hook would do) …');
    const build = spawnSync(process.execPath, [tsxCli(checkout.dir), 'src/tooling/build.ts'], {
      cwd: checkout.dir,
      stdio: 'inherit',
      env: { ...process.env, BUILD_DIR: 'dist', NEXT_TELEMETRY_DISABLED: '1' },
    });
    if (build.status !== 0) throw new Error(`npm run build failed (exit ${build.status})`);
    notes.push('dist/ was built by this run first.');
  }
  const npmCli = process.env.npm_execpath;
  const ways = [
    {
      name: 'npm start',
      command: npmCli?.endsWith('.js') ? process.execPath : 'npm',
      args: npmCli?.endsWith('.js') ? [npmCli, 'start'] : ['start'],
      group: true,
    },
    { name: appCommandLine(checkout), command: process.execPath, args: appArgs(checkout), group: false },
  ];
  const runs: { way: string; healthMs: number; listMs: number; pageMs: number; rssAfter: number }[] = [];
  for (let attempt = 0; attempt < options.coldRuns; attempt++) {
    for (const way of ways) {
      const port = await freePort();
      const since = performance.now();
      const server = startProcess({ name: way.name, command: way.command, args: way.args, env: appEnv(checkout, port, ctx.databaseUrl), port, group: way.group });
      ctx.running.add(server);
      try {
        const healthMs = await waitFor200(server, '/api/health', since, 60_000);
        const list = await fetch(`${server.baseUrl}/api/plants?limit=20`, { headers: { authorization: `Bearer ${ctx.token}` } });
        await list.arrayBuffer();
        const listMs = performance.now() - since;
        const page = await fetch(`${server.baseUrl}/`);
        await page.arrayBuffer();
        const pageMs = performance.now() - since;
        if (list.status !== 200 || page.status !== 200) ctx.failures.push(`cold start (${way.name}): list answered ${list.status}, / answered ${page.status}`);
        // Under npm start the server is a grandchild (npm → sh → node): the largest process of the group.
        const serverPid = way.group ? [server.pid, ...descendants(server.pid)].sort((a, b) => memory(b).rss - memory(a).rss)[0]! : server.pid;
        runs.push({ way: way.name, healthMs: Math.round(healthMs), listMs: Math.round(listMs), pageMs: Math.round(pageMs), rssAfter: memory(serverPid).rss });
        console.log(`${way.name.padEnd(32)} health ${int(healthMs)} ms, first list ${int(listMs)} ms, first page / ${int(pageMs)} ms`);
      } finally {
        await server.stop();
        ctx.running.delete(server);
      }
    }
  }
  ctx.results.cold = { runs, notes };
  const medianOf = (way: string, key: 'healthMs' | 'listMs' | 'pageMs' | 'rssAfter') => median(runs.filter((r) => r.way === way).map((r) => r[key]));
  ctx.report.push(
    `### Cold start: spawn to the first 200 (build and database present; median of ${options.coldRuns})`,
    '',
    table(
      ['command', 'GET /api/health', 'then GET /api/plants', 'then GET /', 'RSS after MB'],
      ways.map((way) => [way.name, `${int(medianOf(way.name, 'healthMs'))} ms`, `${int(medianOf(way.name, 'listMs'))} ms`, `${int(medianOf(way.name, 'pageMs'))} ms`, mb(medianOf(way.name, 'rssAfter'))]),
      ['l', 'r', 'r', 'r', 'r'],
    ),
    '',
    `Goal: under 1 s to the first 200 with npm start: ${int(medianOf('npm start', 'healthMs'))} ms ${medianOf('npm start', 'healthMs') < 1000 ? 'meets' : 'misses'} it. ` +
      `First start on an empty database (migrations, first admin): ${int(ctx.firstStartMs)} ms to /api/health.${notes.length ? ` ${notes.join(' ')}` : ''}`,
    '',
  );
}
