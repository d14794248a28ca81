/**
 * What a call over the MCP door costs (`npm run bench:mcp`; with TEST_DATABASE=postgresql on a private PostgreSQL
 * server; under a minute): the latency of a `plants_list` call (limit 20) over the MCP door beside the same
 * list over REST, on the production build, one request at a time on one keep-alive connection.
 *
 * - REST: `GET /api/plants?limit=20`.
 * - MCP: `POST /api/mcp` with the JSON-RPC message a client sends for `tools/call plants_list {limit: 20}`.
 * - MCP through the SDK: the official `Client.callTool`, as a host sees it (the client's own work included:
 *   fetch, and the check of the result against the tool's output schema).
 *
 * CALLS (1,000) calls each, in ROUNDS (5) interleaved rounds so the machine's load falls on all three alike,
 * after a warm-up. Beside the latency, the server's own CPU time per call (from /proc: what a call costs the
 * server, which a busy machine's scheduling does not blur as it blurs latency). It also prints the tools
 * as a client lists them. Not part of the test suite: its numbers depend on what else the machine runs.
 */
import http from 'node:http';
import os from 'node:os';

import { connectMcp, MCP_HEADERS } from '@test-support/mcp-client';
import { ensureTestBuild } from '@test-support/build';
import { startPrivatePostgres } from '@test-support/postgres';
import { startServer } from '@test-support/server-process';
import { percentile } from './lib/load';
import { cpuSeconds } from './lib/proc';

const postgresql = process.env.TEST_DATABASE === 'postgresql';
const CALLS = Number(process.env.CALLS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PLANTS = 100;

function send(agent: http.Agent, url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    const request = http.request(url, { method: options.method, agent, headers: { ...options.headers, ...(body ? { 'Content-Length': String(body.length) } : {}) } }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => (response.statusCode === 200 ? resolve(Buffer.concat(parts).toString('utf8')) : reject(new Error(`${url} answered ${response.statusCode}`))));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function timed(times: number[], run: () => Promise<unknown>): Promise<void> {
  const startedAt = performance.now();
  await run();
  times.push(performance.now() - startedAt);
}

const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return `p50 ${percentile(sorted, 0.5).toFixed(2)} ms, p90 ${percentile(sorted, 0.9).toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms, mean ${mean.toFixed(2)} ms (${sorted.length} calls)`;
};

async function main(): Promise<void> {
  ensureTestBuild();
  const postgres = postgresql && !process.env.TEST_POSTGRES_URL ? await startPrivatePostgres() : undefined;
  if (postgres) process.env.TEST_POSTGRES_URL = postgres.url;
  const server = await startServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', LOG_LEVEL: 'warn' } });
  try {
    const { token } = await server.createToken('bench-mcp', 'member');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const auth = { Authorization: `Bearer ${token}` };
    for (let index = 1; index <= PLANTS; index++) {
      await send(agent, `${server.baseUrl}/api/plants`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: `{"id":${index},"name":"bench ${index}"}` });
    }
    const client = await connectMcp(server.baseUrl, token, 'bench-mcp');
    const { tools } = await client.listTools();
    console.log(`[bench:mcp] the tools a member's client lists:\n${tools.map((tool) => `  ${tool.name}: ${tool.description}`).join('\n')}`);

    const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'plants_list', arguments: { limit: 20 } } });
    const doors = {
      rest: () => send(agent, `${server.baseUrl}/api/plants?limit=20`, { method: 'GET', headers: auth }),
      mcp: () => send(agent, `${server.baseUrl}/api/mcp`, { method: 'POST', headers: { ...auth, ...MCP_HEADERS, 'Content-Type': 'application/json' }, body: rpc }),
      'mcp (SDK client)': () => client.callTool({ name: 'plants_list', arguments: { limit: 20 } }),
    };
    const rest = JSON.parse(await doors.rest()) as unknown[];
    const mcp = JSON.parse(await doors.mcp()) as { result: { structuredContent: { items: unknown[] } } };
    if (rest.length !== 20 || mcp.result.structuredContent.items.length !== 20) throw new Error('a list did not hold 20 plants');

    const times = Object.fromEntries(Object.keys(doors).map((door) => [door, [] as number[]]));
    const cpu = Object.fromEntries(Object.keys(doors).map((door) => [door, 0]));
    for (const run of Object.values(doors)) for (let index = 0; index < 100; index++) await run();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [door, run] of Object.entries(doors)) {
        const before = cpuSeconds(server.pid);
        for (let index = 0; index < CALLS / ROUNDS; index++) await timed(times[door]!, run);
        cpu[door]! += cpuSeconds(server.pid) - before;
      }
    }
    console.log(`[bench:mcp] plants_list, limit 20, one call at a time, ${postgresql ? 'PostgreSQL' : 'SQLite'} (load average ${os.loadavg()[0]!.toFixed(1)}):`);
    for (const [door, values] of Object.entries(times)) {
      console.log(`  ${door.padEnd(17)} ${summary(values)}; server CPU ${((cpu[door]! / values.length) * 1000).toFixed(2)} ms per call`);
    }
    await client.close();
    agent.destroy();
  } finally {
    await server.stop();
    await postgres?.stop();
  }
}

await main();
