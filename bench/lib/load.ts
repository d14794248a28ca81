/**
 * One measurement: autocannon against one server for a while, with the server's RSS sampled meanwhile and
 * its CPU time read before and after. Latencies are kept per response (autocannon's own histogram has
 * 1 ms resolution, too coarse for the floor).
 */
import autocannon, { type Request, type Result } from 'autocannon';

import { cpuSeconds, machineBusySeconds, memory, type Server } from './proc';

/**
 * `list304`: the list with `If-None-Match` carrying the page's current ETag (read just before the run), which a
 * server that keeps conditional requests answers 304 without running the query; the others answer 200.
 * `listFresh`: the same page, but each request a query no request of the last 100,000 made (`freshListPaths`),
 * so a server that keeps its answers by query (the app on SQLite: src/server/http/rest/kept-answers.ts) runs
 * the list's query every time.
 */
export type Workload = 'list' | 'create' | 'delete' | 'list304' | 'listFresh';

/** The status each workload should get; anything else is counted as unexpected (and fails the run). */
export const EXPECTED_STATUS: Record<Workload, number> = { list: 200, list304: 304, listFresh: 200, create: 200, delete: 204 };

/** How many distinct queries `listFresh` goes through before it starts over: ten times the answers the app keeps. */
const FRESH_QUERIES = 100_000;
let freshQuery = 0;

/**
 * The list `query`'s fresh paths, one per call: its `after` (0 for none) lowered by 1 to 100,000, from one counter
 * every caller shares. Ids below a page's first row change nothing, so the page is the same or starts at most
 * 100 seeded rows earlier (bench/lib/data.ts spaces seeded ids 1,000 apart), for the same work, and each path is
 * a query no recent request made. `at(n)` is the nth path, for checks.
 */
export function freshListPaths(query: string) {
  const params = new URLSearchParams(query);
  const after = BigInt(params.get('after') ?? '0');
  params.delete('after');
  const prefix = `/api/plants?${params}${params.size > 0 ? '&' : ''}after=`;
  const at = (n: number) => `${prefix}${after - BigInt((n % FRESH_QUERIES) + 1)}`;
  return Object.assign(() => at(freshQuery++), { at });
}

export type LoadPlan = {
  server: Server;
  workload: Workload;
  token: string;
  seconds: number;
  connections: number;
  /** Instead of `seconds`: stop after this many requests. */
  amount?: number;
  /** list: the query string after `?`. */
  query?: string;
  /** create: hands out the next unique id. */
  nextCreateId?: () => bigint;
  /** delete: ids that exist and belong to the token's user; each is used once. */
  deletePool?: bigint[];
  /** Called each `sampleEverySeconds` with the server's memory and the requests answered since the last call. */
  onSample?: (sample: { at: number; rss: number; hwm: number; responses: number }) => void;
  sampleEverySeconds?: number;
};

export type Measurement = {
  server: string;
  workload: Workload;
  seconds: number;
  connections: number;
  responses: number;
  reqPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  statusCounts: Record<string, number>;
  /** Answers with another status than the workload's (EXPECTED_STATUS). */
  unexpected: number;
  status5xx: number;
  errors: number;
  timeouts: number;
  /** delete: ran out of ids before the end (the rest were 404s). */
  poolExhausted: boolean;
  /** Sampled VmRSS maximum during the run, VmHWM (peak since the server started) after it, in bytes. */
  peakRss: number;
  hwmAfter: number;
  /** Server CPU seconds per second of the run (1.0 = one core busy) and per 1000 responses. */
  serverCpu: number;
  cpuMsPer1k: number;
  /** Cores busy with this process (autocannon) and with everything else on the machine meanwhile: noise. */
  clientCpu: number;
  otherCpu: number;
};

/** The value at `fraction` (0 < fraction ≤ 1) of ascending values: the nearest-rank percentile; NaN for none. */
export function percentile(sorted: ArrayLike<number>, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** The body of the bench's creates: every server gets the same bytes for an id. */
export const createBody = (id: bigint) => `{"id":${id},"name":"Bench plant ${id}","tag":"bench"}`;

export async function measure(plan: LoadPlan): Promise<Measurement> {
  const { server, workload, token } = plan;
  const auth = { authorization: `Bearer ${token}` };
  let poolExhausted = false;
  let poolIndex = 0;
  let request: Request;
  if (workload === 'list') {
    request = { method: 'GET', path: `/api/plants?${plan.query ?? 'limit=20'}`, headers: auth };
  } else if (workload === 'listFresh') {
    const next = freshListPaths(plan.query ?? 'limit=20');
    request = { method: 'GET', path: next.at(0), headers: auth, setupRequest: (params) => ({ ...params, path: next() }) };
  } else if (workload === 'list304') {
    const path = `/api/plants?${plan.query ?? 'limit=20'}`;
    const page = await fetch(server.baseUrl + path, { headers: auth });
    await page.arrayBuffer();
    const etag = page.headers.get('etag');
    if (etag === null) throw new Error(`${server.name} answers GET ${path} without an ETag: it cannot be measured with If-None-Match`);
    request = { method: 'GET', path, headers: { ...auth, 'if-none-match': etag } };
  } else if (workload === 'create') {
    const next = plan.nextCreateId!;
    request = {
      method: 'POST',
      path: '/api/plants',
      headers: { ...auth, 'content-type': 'application/json' },
      setupRequest: (params) => {
        const id = next();
        return { ...params, body: createBody(id) };
      },
    };
  } else {
    const pool = plan.deletePool!;
    request = {
      method: 'DELETE',
      path: '/api/plants/1',
      headers: auth,
      setupRequest: (params) => {
        if (poolIndex >= pool.length) poolExhausted = true;
        // Past the pool's end the id is one no plant has: a 404, counted as a failure of the run.
        return { ...params, path: `/api/plants/${poolIndex < pool.length ? pool[poolIndex++] : 1}` };
      },
    };
  }

  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let sinceSample = 0;
  const statusCounts: Record<string, number> = {};
  let peakRss = memory(server.pid).rss;
  const cpuBefore = cpuSeconds(server.pid);
  const machineBefore = machineBusySeconds();
  const selfBefore = process.cpuUsage();
  const startedAt = performance.now();

  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, memory(server.pid).rss)), 250);
  const sampleEvery = (plan.sampleEverySeconds ?? 10) * 1000;
  const sampleTimer = plan.onSample
    ? setInterval(() => {
        const { rss, hwm } = memory(server.pid);
        plan.onSample!({ at: (performance.now() - startedAt) / 1000, rss, hwm, responses: sinceSample });
        sinceSample = 0;
      }, sampleEvery)
    : undefined;

  // The timers stop whatever the load does: a load that throws (a request it cannot build) left them running,
  // and the bench printed "rss 0 MB" every 10 s for good after its servers had stopped.
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      plan.amount
        ? { url: server.baseUrl, connections: plan.connections, amount: plan.amount, requests: [request] }
        : { url: server.baseUrl, connections: plan.connections, duration: plan.seconds, requests: [request] },
      (error, outcome) => (error ? reject(error) : resolve(outcome)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
      sinceSample++;
      statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
    });
  }).finally(() => {
    clearInterval(rssTimer);
    if (sampleTimer) clearInterval(sampleTimer);
  });
  const elapsed = (performance.now() - startedAt) / 1000;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const self = process.cpuUsage(selfBefore);
  const client = (self.user + self.system) / 1e6;
  const other = Math.max(0, machineBusySeconds() - machineBefore - cpu - client);
  const mem = memory(server.pid);
  peakRss = Math.max(peakRss, mem.rss);
  const sorted = latencies.subarray(0, count).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  const expected = String(EXPECTED_STATUS[workload]);
  const unexpected = Object.entries(statusCounts).reduce((total, [status, n]) => total + (status === expected ? 0 : n), 0);
  const status5xx = Object.entries(statusCounts).reduce((total, [status, n]) => total + (status.startsWith('5') ? n : 0), 0);
  const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

  return {
    server: server.name,
    workload,
    seconds: plan.seconds,
    connections: plan.connections,
    responses: count,
    reqPerSec: round(result.requests.average, 0),
    latencyMs: {
      p50: round(percentile(sorted, 0.5)),
      p90: round(percentile(sorted, 0.9)),
      p99: round(percentile(sorted, 0.99)),
      max: round(sorted[sorted.length - 1] ?? Number.NaN),
      mean: round(count ? sum / count : Number.NaN),
    },
    statusCounts,
    unexpected,
    status5xx,
    errors: result.errors,
    timeouts: result.timeouts,
    poolExhausted,
    peakRss,
    hwmAfter: mem.hwm,
    serverCpu: round(cpu / elapsed),
    cpuMsPer1k: round(count ? (cpu * 1000 * 1000) / count : Number.NaN, 1),
    clientCpu: round(client / elapsed),
    otherCpu: round(other / elapsed),
  };
}

export type OneRequest = { method: 'GET' | 'POST' | 'DELETE'; path: string; body?: string };

/**
 * `n` requests sent one at a time (no queueing), each made by `next(i)`: the cost of one request, as
 * p50/p99 in ms. Answers other than `expected` are counted.
 */
export async function sequentialLatency(
  baseUrl: string,
  token: string,
  n: number,
  next: (i: number) => OneRequest,
  expected: number,
): Promise<{ p50: number; p99: number; unexpected: number }> {
  const times: number[] = [];
  let unexpected = 0;
  for (let i = 0; i < n; i++) {
    const request = next(i);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const startedAt = performance.now();
    const response = await fetch(baseUrl + request.path, { method: request.method, headers, body: request.body });
    await response.arrayBuffer();
    times.push(performance.now() - startedAt);
    if (response.status !== expected) unexpected++;
  }
  times.sort((a, b) => a - b);
  const at = (fraction: number) => Math.round(percentile(times, fraction) * 100) / 100;
  return { p50: at(0.5), p99: at(0.99), unexpected };
}
