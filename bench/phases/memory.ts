/**
 * Memory of the compiled app, on a fresh instance started with bench/probe.ts (IPC only; see there): RSS
 * before the first request, after 1,000 list requests, after the admin page and its assets were served,
 * during and after a soak (--soak), and the peak (VmHWM); then V8's own figures, /proc/PID/smaps by
 * mapping, and a heap snapshot summarised by source package (lib/heap.ts). RSS readings come before the
 * snapshot, whose writing itself takes memory.
 */
import { statSync } from 'node:fs';
import path from 'node:path';

import type { Context, RunRecord } from '../lib/context';
import { summariseHeapSnapshot } from '../lib/heap';
import { summariseSmaps } from '../lib/smaps';
import { measure } from '../lib/load';
import { freePort, memory, type Server, sleep } from '../lib/proc';
import { fixed, int, mb, mean, table } from '../lib/report';
import { appCommandLine, startApp } from '../lib/servers';

type Usage = { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
type Heap = { malloced_memory: number; peak_malloced_memory: number; total_physical_size: number; used_heap_size: number };

async function waitForListening(server: Server, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!/is serving on/.test(server.output())) {
    if (server.exited()) throw new Error(`${server.name} exited before listening:\n${server.output()}`);
    if (performance.now() > deadline) throw new Error(`${server.name} printed no "is serving on" within ${timeoutMs / 1000} s:\n${server.output()}`);
    await sleep(20);
  }
}

/** The admin page and every asset its HTML names, as a browser's first visit fetches them. */
async function servePage(baseUrl: string): Promise<{ requests: number; bytes: number }> {
  const html = await (await fetch(`${baseUrl}/`)).text();
  const assets = [...new Set([...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((match) => match[1]!))];
  let bytes = html.length;
  for (const asset of assets) bytes += (await (await fetch(baseUrl + asset)).arrayBuffer()).byteLength;
  return { requests: 1 + assets.length, bytes };
}

export async function memoryPhase(ctx: Context): Promise<void> {
  const { options } = ctx;
  console.log(`\n## Memory: a fresh app (probe loaded), RSS along the way${options.soakMinutes !== null ? `, soak ${options.soakMinutes} min` : ''}, heap by package`);
  const port = await freePort();
  const server = startApp({ name: 'app', checkout: ctx.checkout, port, databaseUrl: ctx.databaseUrl, nodeFlags: ['--import', ctx.scripts.probe], ipc: true });
  ctx.running.add(server);
  try {
    const points: { when: string; rss: number; hwm: number }[] = [];
    const point = (when: string) => {
      const reading = memory(server.pid);
      points.push({ when, ...reading });
      console.log(`  ${when.padEnd(44)} rss ${mb(reading.rss).padStart(4)} MB  hwm ${mb(reading.hwm).padStart(4)} MB`);
    };
    await waitForListening(server);
    await sleep(500);
    point('listening, before the first request');
    const thousand = await measure({ server, workload: 'listFresh', token: ctx.token, seconds: 0, amount: 1000, connections: options.connections, query: 'limit=20' });
    ctx.check({ ...thousand, round: 0, load1: 0 }, 'memory: 1,000 requests');
    point('after 1,000 list requests');
    const page = await servePage(server.baseUrl);
    point(`after the page (${page.requests} requests, ${int(page.bytes / 1024)} KB)`);

    const samples: { at: number; rss: number; hwm: number; reqPerSec: number }[] = [];
    let soak: Record<string, unknown> | undefined;
    if (options.soakMinutes !== null) {
      console.log(`  soak: ${options.soakWorkload} for ${options.soakMinutes} min at ${options.connections} connections, RSS every 10 s`);
      const measured = await measure({
        server,
        workload: options.soakWorkload,
        token: ctx.token,
        nextCreateId: ctx.nextCreateId,
        seconds: Math.round(options.soakMinutes * 60),
        connections: options.connections,
        query: 'limit=20',
        sampleEverySeconds: 10,
        onSample: ({ at, rss, hwm, responses }) => {
          samples.push({ at: Math.round(at), rss, hwm, reqPerSec: Math.round(responses / 10) });
          console.log(`  ${String(Math.round(at)).padStart(4)} s  rss ${mb(rss)} MB  hwm ${mb(hwm)} MB  ${int(responses / 10)} req/s`);
        },
      });
      const record: RunRecord = { ...measured, round: 0, load1: 0 };
      ctx.check(record, 'soak');
      soak = { ...soakTrend(samples, options.soakMinutes), run: record };
      point(`after the ${options.soakMinutes}-minute soak`);
    }
    await sleep(2_000);
    point('idle 2 s later');

    const usage = await server.ask<{ memory: Usage; heap: Heap }>({ type: 'memory' });
    const smaps = summariseSmaps(server.pid);
    const peak = memory(server.pid).hwm;
    const rss = memory(server.pid).rss;
    console.log('  writing a heap snapshot …');
    const snapshotFile = path.join(ctx.dir, 'app.heapsnapshot');
    await server.ask({ type: 'snapshot', file: snapshotFile }, 300_000);
    const snapshotMb = statSync(snapshotFile).size / 1024 / 1024;
    const heap = summariseHeapSnapshot(snapshotFile, 15);
    ctx.results.memory = { points, peak, usage: usage.memory, heapStatistics: usage.heap, smaps, heap, soak, soakSamples: samples, snapshotMb: Math.round(snapshotMb) };

    const nonHeap = rss - usage.memory.heapUsed;
    const anonymousData = smaps?.rows.find((row) => row.what.startsWith('anonymous data'))?.rssBytes;
    ctx.report.push(
      `### Memory of the app (${appCommandLine(ctx.checkout)}, a fresh instance)`,
      '',
      table(
        ['when', 'RSS MB', 'VmHWM MB'],
        [...points.map((p) => [p.when, mb(p.rss), mb(p.hwm)]), ['peak (VmHWM, before the heap snapshot)', '', mb(peak)]],
        ['l', 'r', 'r'],
      ),
      '',
      `Goal: RSS under 150 MB after a 5-minute soak: ${
        soak
          ? `${mb(points.at(-1)!.rss)} MB after ${options.soakMinutes} min ${points.at(-1)!.rss < 150 * 1024 * 1024 ? 'meets' : 'misses'} it${options.soakMinutes !== 5 ? ' (a soak of another length: indicative only)' : ''}`
          : 'run with --soak'
      }.`,
      '',
      table(
        ['where the RSS is (at the end)', 'MB'],
        [
          ['RSS', mb(rss)],
          ['V8 heap: used (live objects and garbage not yet collected)', mb(usage.memory.heapUsed)],
          ['V8 heap: reserved and touched beyond that (heapTotal − used)', mb(usage.memory.heapTotal - usage.memory.heapUsed)],
          ['outside the JS heap: RSS − heap used', mb(nonHeap)],
          ['  of which V8 external memory (ArrayBuffers, Wasm memories, Buffers)', mb(usage.memory.external)],
          ['  of which malloc held by V8 (malloced_memory; peak)', `${mb(usage.heap.malloced_memory)} (${mb(usage.heap.peak_malloced_memory)})`],
          ...(anonymousData !== undefined
            ? [['anonymous data pages (smaps) − V8 heap pages (total_physical_size): Wasm memory, malloc arenas, stacks', mb(anonymousData - usage.heap.total_physical_size)]]
            : []),
        ],
        ['l', 'r'],
      ),
      '',
      ...(smaps
        ? [table(['/proc/PID/smaps: RSS by mapping', 'MB'], smaps.rows.filter((row) => row.rssBytes >= 512 * 1024).map((row) => [row.what, fixed(row.rssBytes / 1024 / 1024, 1)]), ['l', 'r']), '']
        : []),
      `Heap snapshot: ${fixed(heap.totalBytes / 1024 / 1024, 1)} MB of live objects in ${int(heap.nodeCount)} nodes (the snapshot file: ${fixed(snapshotMb, 0)} MB). Retained size by`,
      'where the code lives (exclusive: what would go with the package; see bench/README.md for how objects are assigned):',
      '',
      table(
        ['package / source', 'retained MB', 'share', 'objects', 'of which code MB'],
        heap.byPackage.slice(0, 25).map((entry) => [entry.place, fixed(entry.bytes / 1024 / 1024, 2), `${fixed((entry.bytes / heap.totalBytes) * 100, 1)} %`, int(entry.objects), fixed(entry.codeBytes / 1024 / 1024, 2)]),
        ['l', 'r', 'r', 'r', 'r'],
      ),
      '',
      table(
        ['by V8 type', 'self MB', 'objects'],
        heap.byType.slice(0, 8).map((entry) => [entry.type, fixed(entry.bytes / 1024 / 1024, 2), int(entry.objects)]),
        ['l', 'r', 'r'],
      ),
      '',
      table(
        ['largest retainers', 'type', 'package / source', 'retained MB'],
        heap.largest.slice(0, 10).map((entry) => [entry.name.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 60), entry.type, entry.place, fixed(entry.retainedBytes / 1024 / 1024, 2)]),
        ['l', 'l', 'l', 'r'],
      ),
      '',
    );
    if (soak) {
      const s = soak as ReturnType<typeof soakTrend>;
      ctx.report.push(
        `Soak: ${options.soakMinutes} min of ${options.soakWorkload} at ${options.connections} connections. RSS from ${s.settledAfterSeconds} s on: ${s.rssMbRange[0]}–${s.rssMbRange[1]} MB; fitted trend ${fixed(s.rssSlopeMbPerMin)} MB/min ` +
          `(${fixed(s.rssTrendMb, 1)} MB over the window); lowest RSS of the second half vs the first: ${s.rssTroughRiseMb >= 0 ? '+' : ''}${fixed(s.rssTroughRiseMb, 1)} MB. ${s.flat ? 'Flat' : 'NOT FLAT'} (allowance 10 MB or 3 %).`,
        '',
      );
    }
  } finally {
    await server.stop();
    ctx.running.delete(server);
  }
}

/**
 * RSS swings with the heap's GC cycles, so the first and last samples say little. A leak shows as a rising
 * trend and as rising troughs: the fitted slope after the first minute, and the lowest RSS of each half.
 */
function soakTrend(samples: { at: number; rss: number }[], minutes: number) {
  const settledAfterSeconds = Math.min(60, (minutes * 60) / 3);
  const steady = samples.filter((sample) => sample.at >= settledAfterSeconds);
  const xs = steady.map((s) => s.at / 60);
  const ys = steady.map((s) => s.rss / 1024 / 1024);
  const [mx, my] = [mean(xs), mean(ys)];
  const slope =
    steady.length < 2 ? Number.NaN : xs.reduce((total, x, i) => total + (x - mx) * (ys[i]! - my), 0) / xs.reduce((total, x) => total + (x - mx) ** 2, 0);
  const windowMinutes = steady.length >= 2 ? (steady.at(-1)!.at - steady[0]!.at) / 60 : Number.NaN;
  const trendMb = slope * windowMinutes;
  const half = Math.floor(steady.length / 2);
  const trough = (part: typeof steady) => Math.min(...part.map((s) => s.rss)) / 1024 / 1024;
  const troughRiseMb = half >= 1 ? trough(steady.slice(half)) - trough(steady.slice(0, half)) : Number.NaN;
  const allowanceMb = Math.max(10, my * 0.03);
  return {
    settledAfterSeconds,
    rssMbRange: [Math.round(Math.min(...ys)), Math.round(Math.max(...ys))],
    rssSlopeMbPerMin: Math.round(slope * 100) / 100,
    rssTrendMb: Math.round(trendMb * 10) / 10,
    rssTroughRiseMb: Math.round(troughRiseMb * 10) / 10,
    flat: Math.abs(trendMb) <= allowanceMb && troughRiseMb <= allowanceMb,
  };
}
