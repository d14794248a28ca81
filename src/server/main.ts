/**
 * The server (`npm start` runs the bundle of this file): configuration → database (migrations, then the
 * client) → first admin → the one node:http server. `--dev` serves the pages from Next.js's development server instead
 * of the static export. SIGTERM reports the instance not ready for SHUTDOWN_DRAIN_MS while still serving, then
 * (like SIGINT at once) stops accepting connections, lets the requests in flight finish, and exits.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

import { config, ConfigError } from './config';
import { databaseEngine } from './db/database-url';
import { keepHeapSmall } from './heap';

const dev = process.argv.includes('--dev');

// Prisma's query compiler is 3.3 MB of WebAssembly. V8 compiles it twice by default, a quick baseline and then
// an optimised tier in background threads, and the second left ~70 MB of RSS behind for good. Its code is not
// on the hot path (a list costs the same CPU with the baseline tier only; see docs/performance.md), so the
// baseline is all it gets. Set before the module is compiled, at the first query.
v8.setFlagsFromString('--liftoff-only');
// The heap's growth, sized for a small server before the first request (heap.ts).
keepHeapSmall();

function readConfigOrExit() {
  try {
    return config();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Plant Store cannot start: ${error.message}`);
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const settings = readConfigOrExit();
  // Loaded once the configuration is known to be good, so a bad value stops the start before anything else.
  // Loading the data layer opens nothing: openDatabase migrates first, then connects.
  const [{ openDatabase }, { startReturningFreePages }, { DatabaseUnavailableError }, { issueFirstAdminToken }, { configureTokenCache }, { createLogger, createRequestLogger }, { projectRoot }] = await Promise.all([
    import('./db/client'),
    import('./db/sqlite-vacuum'),
    import('./db/unavailable'),
    import('./tokens/service'),
    import('./tokens/cache'),
    import('./log'),
    import('./paths'),
  ]);
  // The configuration is handed down from here, never read by the parts (docs/decisions/0001-configuration.md).
  const logger = createLogger(settings.LOG_LEVEL);
  const requestLogger = createRequestLogger(settings.LOG_LEVEL);
  configureTokenCache({ ttlMs: settings.AUTH_CACHE_TTL_MS });
  // Traces, when the OTEL_* variables ask for them, start before the database client: its queries are spans.
  const tracing = await (await import('./observability/tracing')).startTracing(settings);
  // A database that cannot be used is one line naming DATABASE_URL; anything else is a bug and keeps its stack.
  const db = await openDatabase(settings).catch((error: unknown) => {
    if (!(error instanceof DatabaseUnavailableError)) throw error;
    console.error(`Plant Store cannot start: ${error.message}`);
    return process.exit(1);
  });
  const issued = await issueFirstAdminToken();
  if (issued) {
    const publicUrl = settings.PUBLIC_URL ?? `http://localhost:${settings.PORT}`;
    console.log(
      [
        '',
        'Plant Store created its first user, "admin". Its token is shown this once; keep it somewhere safe:',
        '',
        `  ${issued.token}`,
        '',
        `Sign in at ${publicUrl}/ with it, or call the API: curl -H "Authorization: Bearer ${issued.token}" ${publicUrl}/api/plants`,
        '',
      ].join('\n'),
    );
  }
  if (settings.TRUST_PROXY === 'anyPeer') {
    logger.warn(
      'TRUST_PROXY=1 is deprecated: it believes X-Forwarded-For from any peer, so a client that reaches the server directly chooses its own address (and the per-address limits are off). Name your proxies instead: TRUST_PROXY=10.0.0.2 or TRUST_PROXY=10.0.0.0/8 (see README, Configuration)',
    );
  }
  // A promise a library forgot to handle is logged, not allowed to take every request down with it.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));

  const [
    { createFront },
    { startHttpServer },
    { appRouter },
    { startWebhookWorker },
    { configureWebhookService },
    { webhookCounts },
    { startIdempotencySweep },
    { startDeliveryRetention },
    { keepPlantListVersions },
    { startDatabaseSignals },
    { watchAccess },
    { startChangeLogCleanup },
    { startTombstoneExpiry },
    { startImportWork },
  ] = await Promise.all([
    import('./http/front'),
    import('./http/server'),
    import('./app-router'),
    import('./webhooks/delivery/worker'),
    import('./webhooks/settings'),
    import('./webhooks/health-counts'),
    import('./idempotency/store'),
    import('./webhooks/retention'),
    import('./plants/versions'),
    import('./db/signals'),
    import('./tokens/held-access'),
    import('./plants/live/log-cleanup'),
    import('./plants/undo'),
    import('./plants/import/work'),
  ]);
  // What other processes and instances commit, heard as it commits (db/signals.ts): what decides access reaches
  // the token cache and the open streams at once (tokens/held-access.ts), and the list versions are kept.
  const access = watchAccess(logger);
  const signals = await startDatabaseSignals(settings.DATABASE_URL, logger);
  // Conditional lists' versions kept in the process where every commit is heard (plants/versions.ts).
  const listVersions = keepPlantListVersions(settings.DATABASE_URL);
  // On PostgreSQL the instances share each token's rate-limit budget (and each address group's), in the database.
  const rateBudget = databaseEngine(settings.DATABASE_URL) === 'postgresql' ? await import('./db/rate-budget') : undefined;
  // One key and one target policy, for the endpoints' rows and for the sender alike.
  const webhookSettings = { key: settings.WEBHOOKS_SECRET_KEY, policy: { allowHttp: settings.WEBHOOKS_ALLOW_HTTP, allowPrivate: settings.WEBHOOKS_ALLOW_PRIVATE } };
  configureWebhookService(webhookSettings);
  const metrics = settings.METRICS === 'on';
  if (metrics) (await import('./observability/metrics')).watchWebhookQueue((await import('./webhooks/queue-figures')).readWebhookQueue);
  // Neither metrics nor traces: the front runs without an observer at all.
  const observer = metrics || tracing ? (await import('./http/observability/front-observer')).createFrontObserver({ router: appRouter, metrics }) : undefined;
  if (tracing) logger.info({ exporters: tracing.exporters }, 'traces are on (OpenTelemetry)');
  // Set by SIGTERM: the drain window, in which /api/health answers 503 while requests are still served.
  let draining = false;
  const pages = dev
    ? await (await import('./http/pages-dev')).startDevPages(projectRoot)
    : (await import('./http/pages')).loadStaticPages(path.join(path.dirname(fileURLToPath(import.meta.url)), 'pages'), logger);
  const front = createFront({
    config: settings,
    router: appRouter,
    log: logger,
    observer,
    requestLog: requestLogger,
    sharedBudget: rateBudget?.sharedRateBudget,
    checkHealth: async () => {
      await db.$queryRaw`SELECT 1`;
    },
    operatorHealth: async () => ({ webhooks: await webhookCounts() }),
    isDraining: () => draining,
    pages,
  });
  const server = await startHttpServer(front, {
    port: settings.PORT,
    hostname: settings.HOSTNAME_TO_BIND,
    maxConnections: settings.MAX_CONNECTIONS,
    maxConnectionsPerAddress: settings.MAX_CONNECTIONS_PER_ADDRESS,
    trustProxy: settings.TRUST_PROXY,
    log: logger,
  });
  console.log(`Plant Store is serving on http://${settings.HOSTNAME_TO_BIND}:${settings.PORT} (${dev ? 'development' : 'production'})`);
  // Background work, each job on its own timer and in slices of ~10 ms (background/slices.ts): no request waits
  // behind it for longer, and none is needed for it to happen.
  const backgroundJobs = [
    startIdempotencySweep({ onError: (error) => logger.error({ err: error }, 'sweeping expired idempotency keys failed') }),
    startDeliveryRetention({ onError: (error) => logger.error({ err: error }, 'sweeping old webhook deliveries failed') }),
    await startReturningFreePages({ onError: (error) => logger.error({ err: error }, 'giving free pages back to the file system failed') }),
    rateBudget?.startRateBudgetSweep({ onError: (error) => logger.warn({ err: error }, 'sweeping full rate-limit budgets failed') }),
    startChangeLogCleanup({ onError: (error) => logger.error({ err: error }, "cleaning the live feed's change log failed") }),
    startTombstoneExpiry({ onError: (error) => logger.error({ err: error }, 'expiring undo tombstones failed') }),
    startImportWork({ onError: (error) => logger.error({ err: error }, 'applying or sweeping a CSV import failed') }),
  ];
  // Without a key no secret can be read, so nothing is sent; events still wait in the outbox.
  const webhooks = webhookSettings.key
    ? startWebhookWorker({
        key: webhookSettings.key,
        policy: webhookSettings.policy,
        retryBaseMs: settings.WEBHOOKS_RETRY_BASE_MS,
        pollMs: settings.WEBHOOKS_POLL_MS,
        leaseMs: settings.WEBHOOKS_LEASE_MS,
        concurrency: settings.WEBHOOKS_CONCURRENCY,
        log: logger,
      })
    : null;
  if (!webhooks) logger.info({}, 'webhooks are off: WEBHOOKS_SECRET_KEY is not set');
  // SIGTERM (an orchestrator, a deploy): first the drain window, SHUTDOWN_DRAIN_MS, so that the load balancer's
  // health checks see 503 and stop sending here while every request still gets its answer; then stop. SIGINT
  // (Ctrl-C) skips the window; a second signal ends the window early, a third does not wait for anything.
  let endWindow: (() => void) | undefined;
  let closing = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (closing) {
      console.log(`${signal}: stopping without waiting for the requests in flight`);
      process.exit(1);
    }
    if (draining) return endWindow?.();
    draining = true;
    const windowMs = signal === 'SIGTERM' ? settings.SHUTDOWN_DRAIN_MS : 0;
    if (windowMs > 0) {
      console.log(`${signal}: /api/health answers 503 (draining) for ${windowMs} ms; requests are still served, each on a connection that closes after its answer`);
      server.closeAfterEachAnswer();
      await new Promise<void>((resolve) => {
        endWindow = resolve;
        setTimeout(resolve, windowMs);
      });
    }
    closing = true;
    console.log(`${signal}: finishing the requests in flight (and webhook deliveries), then stopping`);
    await Promise.all([server.close(), webhooks?.stop(), ...backgroundJobs.map((job) => job?.stop())]);
    listVersions.stop();
    access.stop();
    await signals.stop();
    await db.$disconnect();
    // What is still batched goes to the collector before the process ends.
    await tracing?.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'sending the last traces failed'));
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void stop(received));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
