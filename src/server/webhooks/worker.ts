import 'server-only';

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { db } from '@/server/db/client';
import type { Logger } from '@/server/log';
import { WEBHOOK_SLOW_ATTEMPT_MS, WEBHOOK_SLOW_ATTEMPTS_MAX } from '@/shared/limits';

import { attemptDelivery, type LeasedEndpoint, type PendingDelivery } from './attempt';
import { leaseFree, releaseLease, renewLease, takeLease } from './leases';
import { onDeliveriesQueued, setEndpointsMayExist } from './outbox';
import { holdBackNewer, recordAttempts } from './record-attempts';
import { sweepOldDeliveries } from './retention';
import { retryDelayMs } from './schedule';
import { type AttemptResult, DELIVERY_TIMEOUT_MS } from './send';
import type { Lookup, TargetPolicy } from './ssrf';
import { wakeUps } from './wake-ups';

/**
 * The delivery worker: one per server process, sending the outbox's rows.
 *
 * - **One sender per endpoint, in order.** An instance sends to an endpoint only while it holds the
 *   endpoint's lease (leaseOwner, leaseUntilMs), taken with a conditional UPDATE that one instance wins on
 *   either engine, and renewed every third of WEBHOOKS_LEASE_MS while it sends. It sends that endpoint's
 *   waiting deliveries one at a time, oldest first; a delivery waiting for a retry holds back the newer
 *   ones (order kept per endpoint). Two instances on one database never send one event at the same time;
 *   if an instance dies, its lease runs out and another (or the restarted one) carries on from the first
 *   delivery not marked sent: at least once overall.
 * - **No busy polling.** A commit in this process wakes the worker at once; a timer wakes it for each
 *   retry it knows of; otherwise it looks every WEBHOOKS_POLL_MS (5 s) for what other instances queued.
 *   The poll is not what sends this process's own events: a wake-up that would only be made good by it is
 *   a bug (worker.test.ts, "no wake-up is lost").
 * - **Every failure backs off.** A failed attempt waits its retry; a failure of the worker itself while
 *   sending to an endpoint (the database refused to write the attempt down, say) gives the lease back
 *   with a wait on the same exponential schedule, so no instance takes the endpoint up again before it.
 * - **One endpoint cannot hold up another.** WEBHOOKS_CONCURRENCY senders work at once; an attempt still
 *   unanswered after WEBHOOK_SLOW_ATTEMPT_MS (1 s) stops counting against it (up to WEBHOOK_SLOW_ATTEMPTS_MAX
 *   such attempts, a bound on sockets), and its endpoint goes back in line once it is answered. Endpoints
 *   that are failing come after the healthy ones. Twelve endpoints that never answer delay a healthy one's
 *   event by about a second, not by their 10 s timeout.
 * - **Shutdown.** stop() takes no new work, lets attempts in flight finish (each ends within 10 s), cuts
 *   the rest short without counting them, and gives the leases back.
 */
export type WorkerOptions = {
  key: Buffer;
  policy: TargetPolicy;
  retryBaseMs: number;
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  log: Logger;
  lookup?: Lookup;
  timeoutMs?: number;
};

export type WebhookWorker = { wake: () => void; stop: () => Promise<void> };

/** Deliveries read per query while draining one endpoint. */
const BATCH = 100;
/** Deliveries sent per lease before the endpoint goes back in line, so busy endpoints take turns. */
const TURN = 200;
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
const ERROR_BACKOFF_MS = 1_000;
/** Deliveries sent and not yet written down, at most: a crash sends these again. */
const UNWRITTEN_MAX = 20;
/** How long deliveries answered 2xx may wait to be written down together (see drain). */
const RECORD_EVERY_MS = 200;
/** How long a sender keeps an endpoint with nothing to send, waiting for the next event. */
const LINGER_MS = 250;

export function startWebhookWorker(options: WorkerOptions): WebhookWorker {
  const { log, leaseMs } = options;
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const shutdown = new AbortController();
  const attemptOptions = { key: options.key, policy: options.policy, lookup: options.lookup, timeoutMs, signal: shutdown.signal };
  const record = (endpoint: LeasedEndpoint, attempted: [PendingDelivery, AttemptResult][]) => recordAttempts(endpoint, attempted, { retryBaseMs: options.retryBaseMs, log });
  const draining = new Map<number, Promise<void>>();
  /** Endpoints whose attempt in flight has been unanswered for WEBHOOK_SLOW_ATTEMPT_MS: they hold no sender. */
  const slow = new Set<number>();
  /** Failures of the worker itself per endpoint, in a row: how long the endpoint waits before the next try. */
  const workerFailures = new Map<number, number>();
  let stopping = false;
  let ticking = false;
  let tickAgain = false;
  const { wake, wakeAt, nextWake, clear: forgetWakeTimes } = wakeUps(() => void tick());

  /** Leases endpoints that have a delivery due, up to the free senders, and starts draining each. */
  async function tick(): Promise<void> {
    if (stopping) return;
    if (ticking) {
      tickAgain = true;
      return;
    }
    ticking = true;
    try {
      do {
        tickAgain = false;
        const free = Math.min(options.concurrency - (draining.size - slow.size), options.concurrency + WEBHOOK_SLOW_ATTEMPTS_MAX - draining.size);
        if (free <= 0) break;
        const now = Date.now();
        const candidates = await db.webhookEndpoint.findMany({
          where: {
            enabled: true,
            id: { notIn: [...draining.keys()] },
            ...leaseFree(now),
            deliveries: { some: { status: 'pending', nextAttemptAtMs: { lte: BigInt(now) } } },
          },
          // Healthy endpoints first, then failing ones (longest failing first); among them, the one served longest ago.
          orderBy: [{ failingSinceMs: { sort: 'asc', nulls: 'first' } }, { leaseUntilMs: { sort: 'asc', nulls: 'first' } }],
          take: free,
          select: { id: true },
        });
        for (const { id } of candidates) {
          if (stopping) break;
          if (await takeLease(id, owner, now, leaseMs)) startDraining(id);
        }
      } while (tickAgain && !stopping);
    } catch (error) {
      log.error({ err: error }, 'webhook worker: looking for work failed');
      wakeAt(Date.now() + ERROR_BACKOFF_MS);
    } finally {
      ticking = false;
    }
  }

  function startDraining(endpointId: number): void {
    const run = drain(endpointId)
      .then(
        () => {
          workerFailures.delete(endpointId);
        },
        (error: unknown) => log.error({ err: error, endpointId }, 'webhook worker: delivering failed'),
      )
      .finally(() => {
        draining.delete(endpointId);
        slow.delete(endpointId);
        // Whatever was queued while this endpoint was leased is picked up now, by this instance or another
        // (an endpoint that failed is held back by its lease until its wait is over).
        if (!stopping) wake();
      });
    draining.set(endpointId, run);
  }

  /**
   * How long an endpoint waits after the worker failed while sending to it: the deliveries' own schedule
   * (30 s, 1 min, 2 min, … at the default base), counted in failures in a row, so a failure that repeats
   * (a database that refuses what is written) slows down instead of spinning.
   */
  function backOffAfterFailure(endpointId: number): number {
    const failures = (workerFailures.get(endpointId) ?? 0) + 1;
    workerFailures.set(endpointId, failures);
    // Bounded: forgetting endpoints is harmless (they start again at the first wait).
    if (workerFailures.size > 10_000) workerFailures.delete(workerFailures.keys().next().value!);
    const at = Date.now() + retryDelayMs(failures, options.retryBaseMs);
    wakeAt(at);
    return at;
  }

  async function drain(endpointId: number): Promise<void> {
    let leaseLost = false;
    const renew = async () => {
      if (!(await renewLease(endpointId, owner, leaseMs))) leaseLost = true;
    };
    const heartbeat = setInterval(() => void renew().catch((error: unknown) => log.warn({ err: error, endpointId }, 'webhook worker: lease renewal failed')), Math.max(50, leaseMs / 3));
    heartbeat.unref();
    // Until when the lease is given back: now (back in line at once), or later after a failure.
    let releaseAt: number | undefined;
    // What was sent and answered 2xx is written down while the next batch is read and sent (one write at a
    // time, in order), gathered up to BATCH deliveries or RECORD_EVERY_MS: under a stream of creates a batch
    // is often one event, and each write is a commit (on SQLite an fsync that holds the process, as a
    // create's does). The batches are read past the last one sent, so a delivery not written down yet is not
    // read again; a crash before the write sends it again (at least once). A failure waits for the writes
    // before it, so its retry is decided on what is written; so does giving the lease back.
    let recording: Promise<unknown> = Promise.resolve();
    let recordFailed: { error: unknown } | undefined;
    let unrecorded: [PendingDelivery, AttemptResult][] = [];
    let firstUnrecordedAt = 0;
    /** Sent and answered, not written down yet (gathered, or being written): what a crash would send again. */
    let unwritten = 0;
    const flush = (endpoint: LeasedEndpoint) => {
      if (unrecorded.length === 0) return;
      const lot = unrecorded;
      unrecorded = [];
      recording = recording
        .then(async () => {
          if (recordFailed) return;
          await record(endpoint, lot);
          unwritten -= lot.length;
        })
        .catch((error: unknown) => (recordFailed ??= { error }));
    };
    let lastEndpoint: LeasedEndpoint | undefined;
    const recorded = async () => {
      if (lastEndpoint) flush(lastEndpoint);
      await recording;
      if (recordFailed) throw recordFailed.error;
    };
    const sendTurn = async () => {
      let sent = 0;
      let lingered = false;
      let after = 0;
      while (!stopping && !leaseLost && sent < TURN) {
        if (recordFailed) throw recordFailed.error;
        const [endpoint, batch]: [LeasedEndpoint | null, PendingDelivery[]] = await Promise.all([
          db.webhookEndpoint.findUnique({
            where: { id: endpointId },
            select: { id: true, url: true, enabled: true, secret: true, previousSecret: true, previousSecretUntilMs: true, failingSinceMs: true, leaseOwner: true },
          }),
          db.webhookDelivery.findMany({
            where: { endpointId, status: 'pending', id: { gt: after } },
            orderBy: { id: 'asc' },
            take: BATCH,
            select: { id: true, eventId: true, type: true, payload: true, attempts: true, createdAtMs: true, nextAttemptAtMs: true },
          }),
        ]);
        if (!endpoint?.enabled || endpoint.leaseOwner !== owner) return;
        lastEndpoint = endpoint;
        if (batch.length === 0) {
          // Under a steady stream the next event is a moment away: wait for it with the lease held,
          // instead of giving the lease back and taking it again for every event.
          if (lingered) return;
          lingered = true;
          await nextWake(LINGER_MS);
          continue;
        }
        lingered = false;
        // Sent one after another, oldest first, up to the first failure; written down together (one commit
        // for the lot). A crash before that write sends them again: at least once.
        const attempted: [PendingDelivery, AttemptResult][] = [];
        let notDue: PendingDelivery | undefined;
        let wentSlow = false;
        let tried = 0;
        for (const delivery of batch) {
          if (stopping || leaseLost) break;
          if (Number(delivery.nextAttemptAtMs) > Date.now()) {
            notDue = delivery;
            break;
          }
          // At most UNWRITTEN_MAX sent and not written down, as before this pipelining: after a crash, at
          // most that many arrive twice.
          if (unwritten >= UNWRITTEN_MAX) {
            if (attempted.length > 0) {
              if (unrecorded.length === 0) firstUnrecordedAt = Date.now();
              unrecorded.push(...attempted.splice(0));
            }
            flush(endpoint);
            await recording;
            if (recordFailed) break;
          }
          const { result, slow: answeredSlowly } = await attemptTimed(endpoint, delivery);
          if (result.aborted) break;
          attempted.push([delivery, result]);
          unwritten++;
          tried++;
          sent++;
          after = delivery.id;
          wentSlow = answeredSlowly;
          if (!result.ok || wentSlow) break;
        }
        const allAnswered = attempted.every(([, result]) => result.ok);
        if (!allAnswered || notDue) {
          await recorded();
          const waitsUntil = await record(endpoint, attempted);
          unwritten -= attempted.length;
          const head = waitsUntil ?? (notDue && { id: notDue.id, nextAttemptAtMs: notDue.nextAttemptAtMs });
          if (head) {
            await holdBackNewer(endpointId, head);
            wakeAt(Number(head.nextAttemptAtMs));
            return;
          }
        } else if (attempted.length > 0) {
          if (unrecorded.length === 0) firstUnrecordedAt = Date.now();
          unrecorded.push(...attempted);
          if (unrecorded.length >= BATCH || Date.now() - firstUnrecordedAt >= RECORD_EVERY_MS) flush(endpoint);
        }
        // A slow endpoint gives its sender up after each answer: back in line behind the others.
        if (tried < batch.length || wentSlow) return;
      }
    };
    try {
      await sendTurn();
      await recorded();
    } catch (error) {
      if (lastEndpoint) flush(lastEndpoint);
      await recording;
      releaseAt = backOffAfterFailure(endpointId);
      throw error;
    } finally {
      clearInterval(heartbeat);
      // Back in line: expired at once, and ordered as served just now; after a failure, free only once its
      // wait is over, for every instance. (If this write fails too, the lease runs out by itself.)
      await releaseLease(endpointId, owner, releaseAt ?? Date.now()).catch((error: unknown) => log.warn({ err: error, endpointId }, 'webhook worker: releasing a lease failed'));
    }
  }

  /** An attempt, and whether it went unanswered past WEBHOOK_SLOW_ATTEMPT_MS (its sender meanwhile set free). */
  async function attemptTimed(endpoint: LeasedEndpoint, delivery: PendingDelivery): Promise<{ result: AttemptResult; slow: boolean }> {
    let wentSlow = false;
    const timer = setTimeout(() => {
      wentSlow = true;
      slow.add(endpoint.id);
      wake();
    }, WEBHOOK_SLOW_ATTEMPT_MS);
    timer.unref();
    try {
      return { result: await attemptDelivery(endpoint, delivery, attemptOptions), slow: wentSlow };
    } finally {
      clearTimeout(timer);
      slow.delete(endpoint.id);
    }
  }

  const unsubscribe = onDeliveriesQueued(wake);
  /** Also learns whether any endpoint is enabled, so commits wake this worker only when one is. */
  const look = () => {
    db.webhookEndpoint.count({ where: { enabled: true } }).then(
      (enabled) => setEndpointsMayExist(enabled > 0),
      () => setEndpointsMayExist(true),
    );
    wake();
  };
  const poll = setInterval(look, options.pollMs);
  poll.unref();
  const sweep = () =>
    void sweepOldDeliveries().catch((error: unknown) => log.error({ err: error }, 'webhook worker: sweeping old deliveries failed'));
  const sweeper = setInterval(sweep, SWEEP_INTERVAL_MS);
  sweeper.unref();
  sweep();
  look();

  return {
    wake,
    async stop() {
      stopping = true;
      unsubscribe();
      clearInterval(poll);
      clearInterval(sweeper);
      forgetWakeTimes();
      wake();
      const inFlight = Promise.all(draining.values());
      // Attempts in flight end within their timeout; past that (and a margin) they are cut short.
      const grace = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeoutMs + 1_000).unref());
      if ((await Promise.race([inFlight.then(() => 'done' as const), grace])) === 'late') {
        shutdown.abort();
        await inFlight;
      }
    },
  };
}
