/**
 * What webhooks cost and how fast they go out, measured on the production build (`npm run bench:webhooks`;
 * with TEST_DATABASE=postgresql on a private PostgreSQL server; about a minute each):
 *
 * 1. Create throughput without and with one webhook endpoint registered: 16 keep-alive connections
 *    creating as fast as the server answers, ROUNDS (3) rounds of 6 s phases on one server (the endpoint
 *    is registered and deleted between phases), the receiver answering 204 at once. With
 *    BASELINE_DIR=<a checkout of another commit, built into its .test-build/> that commit's server is
 *    measured in the same rotation, on a database of its own: a change's create path beside its parent's.
 * 2. Keeping up: one endpoint receiving every event on loopback while KEEPUP_CONNECTIONS (16)
 *    connections create as fast as the server answers, for KEEPUP_SECONDS (20): creates and deliveries
 *    per second (each second, and over the run), the backlog when the creates stop, how long it takes to
 *    drain and at what rate, and the server's CPU per create with the delivery included. Also the most
 *    requests the receiver had open at once. With BASELINE_DIR, the baseline's server (webhooks on) first.
 * 3. Delivery latency at 100 creates/s: an open-loop schedule (a create every 10 ms, whether or not the
 *    last was answered) for 20 s; latency is the receiver's arrival time minus the event's timestamp (set
 *    just before the transaction commits), on one machine clock.
 *
 * Not part of the test suite: it loads the machine for a minute and its numbers depend on what else runs.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';

import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

import { ensureTestBuild } from '@test-support/build';
import { startPrivatePostgres } from '@test-support/postgres';
import { api } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';
import { OPERATOR_TOKEN, registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';
import { percentile } from './lib/load';

const postgresql = process.env.TEST_DATABASE === 'postgresql';
const PHASE_SECONDS = Number(process.env.PHASE_SECONDS ?? 6);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BASELINE_DIR = process.env.BASELINE_DIR;
const RATE_SECONDS = Number(process.env.RATE_SECONDS ?? 20);
const KEEPUP_SECONDS = Number(process.env.KEEPUP_SECONDS ?? 20);
const KEEPUP_CONNECTIONS = Number(process.env.KEEPUP_CONNECTIONS ?? 16);

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

/** Creates as fast as `connections` connections get answers, for `seconds`; resolves to creates per second; `onCreated` sees each. */
async function createRate(baseUrl: string, token: string, nextId: () => bigint, seconds = PHASE_SECONDS, connections = 16, onCreated?: () => void): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let ok = 0;
  const stopAt = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < stopAt)
        if ((await create(agent, baseUrl, token, nextId())) === 200) {
          ok++;
          onCreated?.();
        }
    }),
  );
  agent.destroy();
  return ok / seconds;
}

/** The CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function pendingDeliveries(baseUrl: string): Promise<number> {
  const health = (await api(baseUrl, OPERATOR_TOKEN).get('/api/health')).json as { webhooks: { pending: bigint } };
  return Number(health.webhooks.pending);
}

/**
 * One endpoint receiving every event while the server creates as fast as it can: does delivery keep up?
 * Per second of the run: creates answered, deliveries received; then the backlog and how it drains.
 */
async function keepUp(server: RunningServer, receiver: Receiver, nextId: () => bigint) {
  const firstIndex = receiver.received.length;
  const perSecond: { creates: number; deliveries: number }[] = [];
  let creates = 0;
  const startedAt = Date.now();
  const cpuBefore = cpuSeconds(server.pid);
  let lastCreates = 0;
  let lastDeliveries = firstIndex;
  const sampler = setInterval(() => {
    perSecond.push({ creates: creates - lastCreates, deliveries: receiver.received.length - lastDeliveries });
    lastCreates = creates;
    lastDeliveries = receiver.received.length;
  }, 1_000);
  await createRate(server.baseUrl, server.adminToken, nextId, KEEPUP_SECONDS, KEEPUP_CONNECTIONS, () => creates++);
  clearInterval(sampler);
  const loadSeconds = (Date.now() - startedAt) / 1000;
  const cpuDuring = cpuSeconds(server.pid) - cpuBefore;
  const deliveredDuring = receiver.received.length - firstIndex;
  const backlog = await pendingDeliveries(server.baseUrl);
  // Draining, idle: until every event of the run has arrived.
  const drainStart = Date.now();
  const deliveredAtStop = receiver.received.length - firstIndex;
  await receiver.waitFor(firstIndex + creates, 600_000);
  const drainSeconds = (Date.now() - drainStart) / 1000;
  const cpuTotal = cpuSeconds(server.pid) - cpuBefore;
  const arrived = receiver.received.slice(firstIndex);
  return {
    connections: KEEPUP_CONNECTIONS,
    seconds: Math.round(loadSeconds * 10) / 10,
    creates,
    createsPerSecond: Math.round(creates / loadSeconds),
    deliveriesPerSecondDuring: Math.round(deliveredDuring / loadSeconds),
    perSecond,
    backlogAtStop: { pendingRows: backlog, notYetArrived: creates - deliveredAtStop },
    drain: { seconds: Math.round(drainSeconds * 100) / 100, perSecond: drainSeconds > 0 ? Math.round((creates - deliveredAtStop) / drainSeconds) : null },
    serverCpuMsPerCreate: { duringLoad: Math.round((cpuDuring / creates) * 1e5) / 100, withDrain: Math.round((cpuTotal / creates) * 1e5) / 100 },
    receiverMaxOpenRequests: receiver.maxConcurrent(),
    duplicates: arrived.length - new Set(arrived.map((request) => request.headers['webhook-id'])).size,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
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
    // Nothing of the "with" phases should be left before the latency run. Not a drain time: each phase's
    // endpoint was deleted with what waited for it (the keep-up run below measures draining).
    const backlogStart = Date.now();
    for (;;) {
      const health = (await api(server.baseUrl, OPERATOR_TOKEN).get('/api/health')).json as { webhooks: { pending: bigint } };
      if (health.webhooks.pending === 0n) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`[perf] no delivery left ${Date.now() - backlogStart} ms after the throughput phases (their endpoint deleted with its deliveries)`);

    // 2. Keeping up at the highest create rate, one endpoint receiving everything: the baseline's server
    // first (with webhooks on, a database of its own), then this one, in the same run.
    let baselineKeptUp: Awaited<ReturnType<typeof keepUp>> | undefined;
    if (BASELINE_DIR) {
      const before = await startServer({ dir: BASELINE_DIR, env: webhookEnv({ LOG_LEVEL: 'warn' }) });
      try {
        await registerEndpoint(api(before.baseUrl, before.adminToken), receiver.url, ['plant.created']);
        console.log(`[perf] keeping up, baseline: ${KEEPUP_SECONDS} s of creates at ${KEEPUP_CONNECTIONS} connections (load ${os.loadavg()[0]!.toFixed(2)})`);
        baselineKeptUp = await keepUp(before, receiver, id);
        console.log(`[perf] keeping up, baseline: ${JSON.stringify({ ...baselineKeptUp, perSecond: undefined })}`);
      } finally {
        await before.stop();
      }
    }
    if (endpointId === undefined) endpointId = (await registerEndpoint(admin, receiver.url, ['plant.created'])).id;
    console.log(`[perf] keeping up: ${KEEPUP_SECONDS} s of creates at ${KEEPUP_CONNECTIONS} connections, one endpoint (load ${os.loadavg()[0]!.toFixed(2)})`);
    const keptUp = await keepUp(server, receiver, id);
    console.log(
      `[perf] keeping up: ${keptUp.createsPerSecond} creates/s, ${keptUp.deliveriesPerSecondDuring} deliveries/s meanwhile; at the stop ${keptUp.backlogAtStop.pendingRows} waiting, ` +
        `drained in ${keptUp.drain.seconds} s (${keptUp.drain.perSecond ?? '–'}/s); server CPU ${keptUp.serverCpuMsPerCreate.duringLoad} ms per create; receiver had at most ${keptUp.receiverMaxOpenRequests} open`,
    );

    // 3. Latency at 100 creates/s.
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
      keepingUp: keptUp,
      ...(baselineKeptUp ? { keepingUpBaseline: baselineKeptUp } : {}),
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
