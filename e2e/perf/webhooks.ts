/**
 * The figures issue 13 asks for, measured on the production build (`npx tsx e2e/perf/webhooks.ts`;
 * with TEST_DATABASE=postgresql on a private PostgreSQL server; about a minute each):
 *
 * 1. Create throughput without and with one webhook endpoint registered: 16 keep-alive connections
 *    creating as fast as the server answers, A/B/A/B phases of 8 s on one server (the endpoint is
 *    deleted and registered again between phases), the receiver answering 204 at once.
 * 2. Delivery latency at 100 creates/s: an open-loop schedule (a create every 10 ms, whether or not the
 *    last was answered) for 20 s; latency is the receiver's arrival time minus the event's timestamp (set
 *    just before the transaction commits), on one machine clock.
 *
 * Not part of the test suite: it loads the machine for a minute and its numbers depend on what else runs.
 */
import http from 'node:http';

import { startReceiver } from '@/test/webhook-receiver';

import { ensureTestBuild } from '../support/build';
import { startPrivatePostgres } from '../support/postgres';
import { api } from '../support/http-client';
import { startServer } from '../support/server-process';
import { registerEndpoint, webhookEnv } from '../api/helpers/webhooks';

const postgresql = process.env.TEST_DATABASE === 'postgresql';
const PHASE_SECONDS = Number(process.env.PHASE_SECONDS ?? 8);
const RATE_SECONDS = Number(process.env.RATE_SECONDS ?? 20);

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function create(agent: http.Agent, baseUrl: string, token: string, id: bigint): Promise<number> {
  return new Promise((resolve) => {
    const body = Buffer.from(`{"id":${id},"name":"bench ${id}"}`);
    const request = http.request(
      `${baseUrl}/api/plants`,
      { method: 'POST', agent, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': body.length } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

async function main(): Promise<void> {
  ensureTestBuild();
  const postgres = postgresql && !process.env.TEST_POSTGRES_URL ? await startPrivatePostgres() : undefined;
  if (postgres) process.env.TEST_POSTGRES_URL = postgres.url;
  const receiver = await startReceiver();
  // The figures of a production server: no request log lines, no rate limit.
  const server = await startServer({ env: webhookEnv({ LOG_LEVEL: 'warn' }) });
  const admin = api(server.baseUrl, server.adminToken);
  let nextId = 1n;
  try {
    // 1. Throughput, A/B/A/B.
    const throughput: Record<'without' | 'with', number[]> = { without: [], with: [] };
    let endpointId: number | undefined;
    for (const phase of ['without', 'with', 'without', 'with'] as const) {
      if (phase === 'with') endpointId = (await registerEndpoint(admin, receiver.url, ['plant.created'])).id;
      else if (endpointId !== undefined) {
        await admin.delete(`/api/webhooks/endpoints/${endpointId}`);
        endpointId = undefined;
      }
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
      let ok = 0;
      const stopAt = Date.now() + PHASE_SECONDS * 1000;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (Date.now() < stopAt) if ((await create(agent, server.baseUrl, server.adminToken, nextId++)) === 200) ok++;
        }),
      );
      agent.destroy();
      throughput[phase].push(ok / PHASE_SECONDS);
      console.log(`[perf] creates ${phase} an endpoint: ${(ok / PHASE_SECONDS).toFixed(0)}/s`);
    }
    // Let the worker catch up with the backlog of the "with" phases before the latency run.
    const backlogStart = Date.now();
    for (;;) {
      const health = (await api(server.baseUrl).get('/api/health')).json as { webhooks: { pending: bigint } };
      if (health.webhooks.pending === 0n) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`[perf] backlog of the throughput phases sent ${Date.now() - backlogStart} ms after they ended`);

    // 2. Latency at 100 creates/s.
    if (endpointId === undefined) endpointId = (await registerEndpoint(admin, receiver.url, ['plant.created'])).id;
    const firstIndex = receiver.received.length;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    const createMs: number[] = [];
    const pending: Promise<void>[] = [];
    const startedAt = performance.now();
    const total = RATE_SECONDS * 100;
    for (let index = 0; index < total; index++) {
      const due = startedAt + index * 10;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const sentAt = performance.now();
      const id = nextId++;
      pending.push(create(agent, server.baseUrl, server.adminToken, id).then(() => void createMs.push(performance.now() - sentAt)));
    }
    await Promise.all(pending);
    const achieved = total / ((performance.now() - startedAt) / 1000);
    await receiver.waitFor(firstIndex + total, 120_000);
    agent.destroy();
    const latencies = receiver.received
      .slice(firstIndex)
      .map((request) => request.at - Date.parse(/"timestamp":"([^"]+)"/.exec(request.body)![1]!))
      .sort((a, b) => a - b);
    createMs.sort((a, b) => a - b);
    const summary = {
      engine: postgresql ? 'postgresql' : 'sqlite',
      createsPerSecondWithoutEndpoint: throughput.without.map((value) => Math.round(value)),
      createsPerSecondWithEndpoint: throughput.with.map((value) => Math.round(value)),
      rateRun: { targetPerSecond: 100, achievedPerSecond: Math.round(achieved), events: latencies.length },
      deliveryLatencyMs: { p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9), p99: percentile(latencies, 0.99), max: latencies.at(-1) },
      createLatencyMs: { p50: Math.round(percentile(createMs, 0.5) * 10) / 10, p99: Math.round(percentile(createMs, 0.99) * 10) / 10 },
      duplicates: receiver.received.length - new Set(receiver.received.map((request) => request.headers['webhook-id'])).size,
    };
    console.log(JSON.stringify(summary, null, 2));
  } finally {
    await server.stop();
    await receiver.close();
    await postgres?.stop();
  }
}

await main();
