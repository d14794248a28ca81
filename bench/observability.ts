/**
 * `npm run bench:observability`: what metrics and traces cost a list. Three servers of the
 * test build on databases seeded alike, measured in alternating rounds so the machine's noise falls on each:
 *
 *   default   METRICS=on (the default), traces off
 *   metrics-off  METRICS=off, traces off
 *   traced    METRICS=on, traces on: every span exported (OTLP/HTTP protobuf, batched) to a sink that reads and drops them
 *
 *   npm run bench:observability -- [--rounds=N] [--seconds=S] [--connections=C]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { parseArgs } from 'node:util';

import { ensureTestBuild } from '@test-support/build';
import { type RunningServer, startServer } from '@test-support/server-process';

import { measure } from './lib/load';
import type { Server } from './lib/proc';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, seconds: { type: 'string', default: '5' }, connections: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const quiet = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_TOKEN: 'off', RATE_LIMIT_AUTH_FAILURES: 'off', MAX_CONNECTIONS_PER_ADDRESS: '100000' };

async function main(): Promise<void> {
  ensureTestBuild();
  let spansBytes = 0;
  const sink = http.createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (spansBytes += chunk.length));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

  const configs: [string, Record<string, string>][] = [
    ['default', quiet],
    ['metrics-off', { ...quiet, METRICS: 'off' }],
    ['traced', { ...quiet, OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl }],
  ];
  const running: { name: string; server: RunningServer; token: string }[] = [];
  try {
    for (const [name, env] of configs) {
      const server = await startServer({ env });
      running.push({ name, server, token: server.adminToken });
      // The same 200 plants on each: a list of 20 reads a page of them.
      for (let start = 0; start < 200; start += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            fetch(`${server.baseUrl}/api/plants`, {
              method: 'POST',
              headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
              body: JSON.stringify({ id: 1000 + start + index, name: `Bench plant ${start + index}`, tag: 'bench' }),
            }).then((response) => response.arrayBuffer()),
          ),
        );
      }
    }
    const results = new Map<string, number[]>(configs.map(([name]) => [name, []]));
    const cpu = new Map<string, number[]>(configs.map(([name]) => [name, []]));
    for (let round = 1; round <= rounds; round++) {
      // Each round in another order, so no configuration always follows the same one.
      const order = round % 2 === 0 ? [...running].reverse() : running;
      for (const { name, server, token } of order) {
        const subject: Server = { name, pid: server.pid, baseUrl: server.baseUrl, output: server.log, exited: server.exited, stop: server.stop, ask: async () => { throw new Error('no probe'); } };
        const measured = await measure({ server: subject, workload: 'list', token, seconds, connections, query: 'limit=20' });
        if (measured.unexpected > 0 || measured.errors > 0) throw new Error(`${name}: ${measured.unexpected} unexpected statuses, ${measured.errors} errors`);
        results.get(name)!.push(measured.reqPerSec);
        cpu.get(name)!.push(measured.cpuMsPer1k);
        console.log(`round ${round} ${name.padEnd(12)} ${Math.round(measured.reqPerSec)} req/s  p50 ${measured.latencyMs.p50} ms  server CPU ${measured.cpuMsPer1k.toFixed(1)} ms/1k  load ${os.loadavg()[0]!.toFixed(2)}`);
      }
    }
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
    const base = median(results.get('default')!);
    console.log(`\nlist of 20, ${connections} connections, ${rounds} rounds × ${seconds} s, medians:`);
    for (const [name, list] of results) {
      const value = median(list);
      console.log(
        `  ${name.padEnd(12)} ${Math.round(value)} req/s  (${value >= base ? '+' : ''}${(((value - base) / base) * 100).toFixed(1)} % vs default)  server CPU ${median(cpu.get(name)!).toFixed(1)} ms per 1k lists  rounds: ${list.map(Math.round).join(', ')}`,
      );
    }
    const off = median(results.get('metrics-off')!);
    console.log(`\nmetrics cost: ${(((off - base) / off) * 100).toFixed(1)} % of a list's throughput (default vs METRICS=off)`);
    const cpuOf = (name: string) => median(cpu.get(name)!);
    console.log(`server CPU per list: metrics ${(((cpuOf('default') - cpuOf('metrics-off')) / cpuOf('metrics-off')) * 100).toFixed(1)} % more than METRICS=off; tracing ${(((cpuOf('traced') - cpuOf('default')) / cpuOf('default')) * 100).toFixed(1)} % more than default`);
    console.log(`tracing cost: ${(((base - median(results.get('traced')!)) / base) * 100).toFixed(1)} % (traced vs default); ${spansBytes} bytes of spans exported`);
  } finally {
    for (const { server } of running) await server.stop();
    sink.close();
  }
}

await main();
