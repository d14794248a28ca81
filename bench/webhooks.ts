/**
 * The figures issue 13 asks for, measured on the production build (`npm run bench:webhooks`;
 * with TEST_DATABASE=postgresql on a private PostgreSQL server; about a minute each):
 *
 * 1. Create throughput without and with one webhook endpoint registered: 16 keep-alive connections
 *    creating as fast as the server answers, ROUNDS (3) rounds of 6 s phases on one server (the endpoint
 *    is registered and deleted between phases), the receiver answering 204 at once. With
 *    BASELINE_DIR=<a checkout of another commit, built into its .test-build/> that commit's server is
 *    measured in the same rotation, on a database of its own: the create path before this change.
 * 2. Delivery latency at 100 creates/s: an open-loop schedule (a create every 10 ms, whether or not the
 *    last was answered) for 20 s; latency is the receiver's arrival time minus the event's timestamp (set
 *    just before the transaction commits), on one machine clock.
 *
 * Not part of the test suite: it loads the machine for a minute and its numbers depend on what else runs.
 */
import http from 'node:http';

import { startReceiver } from '@test-support/webhook-receiver';

import { ensureTestBuild } from '@test-support/build';
import { startPrivatePostgres } from '@test-support/postgres';
import { api } from '@test-support/http-client';
import { startServer } from '@test-support/server-process';
import { registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';
import { percentile } from './lib/load';

const postgresql = process.env.TEST_DATABASE === 'postgresql';
const PHASE_SECONDS = Number(process.env.PHASE_SECONDS ?? 6);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BASELINE_DIR = process.env.BASELINE_DIR;
const RATE_SECONDS = Number(process.env.RATE_SECONDS ?? 20);

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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Creates as fast as 16 connections get answers, for PHASE_SECONDS; resolves to creates per second. */
async function createRate(baseUrl: string, token: string, nextId: () => bigint): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  let ok = 0;
  const stopAt = Date.now() + PHASE_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < stopAt) if ((await create(agent, baseUrl, token, nextId())) === 200) ok++;
    }),
  );
  agent.destroy();
  return ok / PHASE_SECONDS;
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
    // 1. Throughput: (baseline,) without an endpoint, with one; ROUNDS times.
    const baseline = BASELINE_DIR ? await startServer({ dir: BASELINE_DIR, env: { LOG_LEVEL: 'warn', RATE_LIMIT_PER_TOKEN: 'off' } }) : undefined;
    const throughput: Record<'baseline' | 'without' | 'with', number[]> = { baseline: [], without: [], with: [] };
    const id = () => nextId++;
    let endpointId: number | undefined;
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        if (baseline) throughput.baseline.push(await createRate(baseline.baseUrl, baseline.adminToken, id));
        throughput.without.push(await createRate(server.baseUrl, server.adminToken, id));
        endpointId = (await registerEndpoint(admin, receiver.url, ['plant.created'])).id;
        throughput.with.push(await createRate(server.baseUrl, server.adminToken, id));
        await admin.delete(`/api/webhooks/endpoints/${endpointId}`);
        endpointId = undefined;
        console.log(`[perf] round ${round}: creates/s ${baseline ? `baseline ${throughput.baseline.at(-1)!.toFixed(0)}, ` : ''}without an endpoint ${throughput.without.at(-1)!.toFixed(0)}, with one ${throughput.with.at(-1)!.toFixed(0)}`);
      }
    } finally {
      await baseline?.stop();
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
      createsPerSecond: Object.fromEntries(
        Object.entries(throughput)
          .filter(([, values]) => values.length > 0)
          .map(([name, values]) => [name, { median: Math.round(median(values)), runs: values.map((value) => Math.round(value)) }]),
      ),
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
