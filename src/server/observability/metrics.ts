import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric the server exposes at `GET /api/metrics` (Prometheus text format), in one registry of this
 * process. The names are the contract with dashboards and alerts (docs/operations.md,
 * docs/grafana-dashboard.json, whose every query a test checks against a real scrape): rename one only with them.
 *
 * Labels are bounded by construction: route templates and procedure names from the router, a door from a
 * fixed list, a status code, an outcome from a fixed list. Nothing a client writes (a path, an id, a tool
 * name) becomes a label value; http/observability/route-label.ts collapses every path it does not know into one value.
 *
 * The figures that live in the database (the webhook queue) and in the PostgreSQL pool are read when
 * Prometheus scrapes, not kept up to date on every request.
 */
export const registry = new Registry();

/** Node's own figures: CPU, memory, heap, event-loop delay, garbage collection, open handles. */
collectDefaultMetrics({ register: registry });

/** Request latencies: a list answers in about a millisecond, a long export in seconds. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** One statement: better-sqlite3 answers in microseconds, a PostgreSQL round trip in a millisecond or so. */
const STATEMENT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/** One series of `httpRequests`: its labels, and the requests answered since the counter was last read. */
export type RequestCount = { readonly labels: Record<'door' | 'route' | 'method' | 'status', string>; pending: number };
/** Every series in the order of its first request: the order prom-client lists them in, as when each request called `inc`. */
const requestCounts: RequestCount[] = [];

/**
 * The series of `httpRequests` for these labels, made once: a request adds 1 to its `pending`. The counter
 * takes what is pending when it is read (a scrape), in prom-client's own hook for that (`collect`), so the
 * text a scrape reads is the same as if each request had called `inc`; a request costs no label check and
 * no label string built by prom-client per call (http/observability/front-observer.ts keeps the series).
 */
export function requestCount(door: string, route: string, method: string, status: number): RequestCount {
  const count = { labels: { door, route, method, status: String(status) }, pending: 0 };
  requestCounts.push(count);
  return count;
}

export const httpRequests = new Counter({
  name: 'plantstore_http_requests_total',
  help: 'Requests answered, by door (rest, trpc, mcp, service, docs, pages, front), route template, method and status (0: the client left before the answer).',
  labelNames: ['door', 'route', 'method', 'status'] as const,
  registers: [registry],
  collect() {
    for (const count of requestCounts) {
      if (count.pending === 0) continue;
      this.inc(count.labels, count.pending);
      count.pending = 0;
    }
  },
});

export const httpRequestDuration = new Histogram({
  name: 'plantstore_http_request_duration_seconds',
  help: 'Time from the request reaching the front to its answer going out, by door, route template and method.',
  labelNames: ['door', 'route', 'method'] as const,
  buckets: REQUEST_BUCKETS,
  registers: [registry],
});

export const databaseStatementDuration = new Histogram({
  name: 'plantstore_db_statement_duration_seconds',
  help: 'Time of each statement in the database driver (on PostgreSQL with the wait for a pooled connection), by kind: query (rows back) or execute.',
  labelNames: ['kind'] as const,
  buckets: STATEMENT_BUCKETS,
  registers: [registry],
});

export const rateLimitRefusals = new Counter({
  name: 'plantstore_rate_limit_refusals_total',
  help: 'Requests (or charges within one) refused with 429, by limiter: token (RATE_LIMIT_PER_TOKEN) or address (RATE_LIMIT_AUTH_FAILURES).',
  labelNames: ['limiter'] as const,
  registers: [registry],
});

export const sharedBudgetCalls = new Counter({
  name: 'plantstore_rate_budget_calls_total',
  help: 'Calls to the rate-limit budgets the instances share (PostgreSQL; one per slice of units, not per request), by outcome: granted, refused, failed (an error, or no answer in time: the instance counts on its own meanwhile).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const authenticationFailures = new Counter({
  name: 'plantstore_auth_failures_total',
  help: 'Requests that sent a bearer token that is not valid (unknown, revoked, expired), by door.',
  labelNames: ['door'] as const,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'plantstore_webhook_deliveries_total',
  help: 'Webhook attempts written down, by outcome: delivered (a 2xx in time), retrying (failed, a retry is scheduled), failed (failed for the whole retry window: given up).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

/** The webhook queue as the database has it when Prometheus scrapes (settled by `watchWebhookQueue`). */
const webhookQueue = {
  pending: new Gauge({ name: 'plantstore_webhook_pending_deliveries', help: 'Webhook deliveries waiting to be sent (the outbox), on every instance together.', registers: [registry] }),
  oldestPendingAge: new Gauge({
    name: 'plantstore_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest delivery still waiting, 0 when none waits: how far behind the senders are.',
    registers: [registry],
  }),
  failingEndpoints: new Gauge({ name: 'plantstore_webhook_failing_endpoints', help: 'Enabled endpoints whose last attempt failed.', registers: [registry] }),
  failedDeliveries: new Gauge({ name: 'plantstore_webhook_failed_deliveries', help: 'Deliveries given up on and still kept (7 days).', registers: [registry] }),
};

export type WebhookQueueFigures = { pending: number; oldestPendingAgeSeconds: number; failingEndpoints: number; failedDeliveries: number };

/**
 * Reads the webhook queue's figures at every scrape. `read` queries the database; when it fails the gauges
 * keep their last values (the scrape still answers, and `up` stays 1: the health check reports the database).
 */
export function watchWebhookQueue(read: () => Promise<WebhookQueueFigures>): void {
  let pending: Promise<void> | undefined;
  const refresh = async () => {
    pending ??= read()
      .then((figures) => {
        webhookQueue.pending.set(figures.pending);
        webhookQueue.oldestPendingAge.set(figures.oldestPendingAgeSeconds);
        webhookQueue.failingEndpoints.set(figures.failingEndpoints);
        webhookQueue.failedDeliveries.set(figures.failedDeliveries);
      })
      .catch(() => {})
      .finally(() => (pending = undefined));
    await pending;
  };
  // One gauge's collect refreshes all four: a scrape reads the database once.
  Object.assign(webhookQueue.pending, { collect: refresh });
}

/** What PostgreSQL's pool (pg.Pool) reports about itself. */
export type PoolFigures = { totalCount: number; idleCount: number; waitingCount: number };

/** The pool's use, read at every scrape; the gauges exist only on PostgreSQL. */
export function watchDatabasePool(pool: PoolFigures, size: number): void {
  // One pool per process; a second client (none today) would otherwise register the names twice, which throws.
  if (registry.getSingleMetric('plantstore_db_pool_max')) return;
  new Gauge({
    name: 'plantstore_db_pool_connections',
    help: 'PostgreSQL connections of this instance, by state: busy (running a statement or transaction) or idle.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'busy' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new Gauge({
    name: 'plantstore_db_pool_waiting',
    help: 'Statements waiting for a free PostgreSQL connection (the pool is exhausted while this is above 0).',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
  new Gauge({ name: 'plantstore_db_pool_max', help: 'DATABASE_POOL_SIZE: the connections this instance opens at most.', registers: [registry] }).set(size);
}

/** Whether this instance hears the database's signals (db/signals.ts), read at every scrape. */
export function watchDatabaseSignals(heard: () => boolean): void {
  if (registry.getSingleMetric('plantstore_db_signals_heard')) return;
  new Gauge({
    name: 'plantstore_db_signals_heard',
    help: "1 while this instance hears every commit as it happens (SQLite: always; PostgreSQL: its LISTEN connection is up and answered its last heartbeat), 0 while it falls back to asking the database.",
    registers: [registry],
    collect() {
      this.set(heard() ? 1 : 0);
    },
  });
}

/** Slices of background work (background/slices.ts): each holds the event loop, so the budget is ~10 ms. */
const SLICE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

export const backgroundSliceDuration = new Histogram({
  name: 'plantstore_background_slice_seconds',
  help: 'Time of each slice of background work (the event loop is held for at most that long), by job.',
  labelNames: ['job'] as const,
  buckets: SLICE_BUCKETS,
  registers: [registry],
});

export const backgroundUnitsDone = new Counter({
  name: 'plantstore_background_done_total',
  help: 'Units of background work done by this process, by job, in the job’s unit (rows deleted, free pages given back).',
  labelNames: ['job'] as const,
  registers: [registry],
});

/** Each job's backlog, read at every scrape. */
const backlogReaders = new Map<string, () => Promise<number>>();

new Gauge({
  name: 'plantstore_background_backlog',
  help: 'Work waiting for each background job, in the job’s unit (rows to delete, free pages to give back), read from the database at each scrape.',
  labelNames: ['job'] as const,
  registers: [registry],
  async collect() {
    // A reading that fails keeps the last value: the scrape still answers (the health check reports the database).
    await Promise.all([...backlogReaders].map(([job, read]) => read().then((value) => this.set({ job }, value), () => {})));
  },
});

/** Shows `read()` as the backlog of `job` from now on. */
export function watchBackgroundBacklog(job: string, read: () => Promise<number>): void {
  backlogReaders.set(job, read);
}

/** The scrape: every metric in Prometheus's text format, with its media type. */
export async function scrape(): Promise<{ body: string; contentType: string }> {
  return { body: await registry.metrics(), contentType: registry.contentType };
}
