import 'server-only';

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { db } from '@/server/db/client';
import type { Logger } from '@/server/log';
import { outsideAnyTrace, recordDeliverySpan, tracingOn } from '@/server/observability/tracing';
import { DELIVERY_TIMEOUT_MS, WEBHOOK_SLOW_ATTEMPTS_MAX } from '@/shared/limits';

import { batchToSend, type LeasedEndpoint, type PendingDelivery } from './due-batch';
import { type BatchTransport, inThisThread } from './batch-transport';
import { leaseFree, takeLease } from './leases';
import { onDeliveriesQueued, setEndpointsMayExist } from '../outbox';
import { recordAttempts } from './record-attempts';
import { retryDelayMs } from './retry-schedule';
import { drainEndpoint, type Sender } from './endpoint-sender';
import { sendingThread } from './thread-handle';
import { attemptFailure, type AttemptResult } from './http-attempt';
import type { Lookup, TargetPolicy } from '../ssrf';
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
 * - **The network half in a thread of its own.** The attempts themselves (SSRF check, signing, the POST,
 *   reading the answer) run in the sending thread (thread-entry.ts), started at the first batch, on its own
 *   event loop: under a flood of creates a turn of this thread's loop answers a create on every busy
 *   connection, and one request per turn kept an endpoint far behind the creates. The database stays
 *   here: the sender reads a batch, the thread sends it in order and posts back what happened, the sender
 *   writes it down. A thread that dies fails its batches (sent again after a back-off) and is started
 *   again at the next batch.
 * - **Shutdown.** stop() takes no new work, lets attempts in flight finish (each ends within 10 s) and
 *   starts no further one, cuts the rest short without counting them, writes down what was answered,
 *   and gives the leases back.
 */
export type WorkerOptions = {
  key: Buffer;
  policy: TargetPolicy;
  retryBaseMs: number;
  pollMs: number;
  leaseMs: number;
  concurrency: number;
  log: Logger;
  /** A test's resolver: the attempts then run on this thread (a function cannot cross to another). */
  lookup?: Lookup;
  timeoutMs?: number;
  /** Where batches are sent from; by default the sending thread (or this thread, given a lookup). */
  transport?: BatchTransport;
};

export type WebhookWorker = { wake: () => void; stop: () => Promise<void> };

const ERROR_BACKOFF_MS = 1_000;

export function startWebhookWorker(options: WorkerOptions): WebhookWorker {
  const { log, leaseMs } = options;
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const transport = options.transport ?? (options.lookup ? inThisThread(options.lookup) : sendingThread(log));
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
    const run = drainEndpoint(endpointId, sender)
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

  /**
   * A batch sent by the transport, and whether its last attempt went unanswered past
   * WEBHOOK_SLOW_ATTEMPT_MS (its sender meanwhile set free); with tracing on, each attempt is recorded as
   * the span whose `traceparent` the receiver got.
   */
  async function sendTimed(endpoint: LeasedEndpoint, deliveries: PendingDelivery[], stop: AbortSignal): Promise<{ attempted: [PendingDelivery, AttemptResult][]; slow: boolean }> {
    const traced = tracingOn();
    let batch;
    try {
      batch = batchToSend(endpoint, deliveries, { key: options.key, policy: options.policy, timeoutMs, traced });
    } catch (error) {
      // A secret that cannot be read: the first delivery fails (and waits its retry), as an attempt would.
      return { attempted: [[deliveries[0]!, attemptFailure((error as Error).message)]], slow: false };
    }
    let sent;
    try {
      sent = await transport.send(batch, {
        onSlow: () => {
          slow.add(endpoint.id);
          wake();
        },
        stop,
      });
    } finally {
      slow.delete(endpoint.id);
    }
    const byId = new Map(deliveries.map((delivery) => [delivery.id, delivery]));
    const attempted = sent.map((attempt): [PendingDelivery, AttemptResult] => {
      const delivery = byId.get(attempt.deliveryId)!;
      if (attempt.trace) {
        const { id: deliveryId, eventId, type: eventType, attempts } = delivery;
        recordDeliverySpan({ endpointId: endpoint.id, deliveryId, eventId, eventType, attempt: attempts + 1, url: endpoint.url }, { ...attempt, trace: attempt.trace });
      }
      return [delivery, attempt.result];
    });
    return { attempted, slow: sent.at(-1)?.slow ?? false };
  }

  const sender: Sender = { owner, leaseMs, log, stopping: () => stopping, nextWake, wakeAt, sendBatch: sendTimed, record, backOffAfterFailure };

  // A commit wakes the worker from inside its request: what the worker then does is not that request's work.
  const unsubscribe = onDeliveriesQueued(() => outsideAnyTrace(wake));
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
  look();

  return {
    wake,
    async stop() {
      stopping = true;
      unsubscribe();
      clearInterval(poll);
      forgetWakeTimes();
      wake();
      transport.finish();
      const inFlight = Promise.all(draining.values());
      // Attempts in flight end within their timeout; past that (and a margin) they are cut short.
      const grace = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), timeoutMs + 1_000).unref());
      if ((await Promise.race([inFlight.then(() => 'done' as const), grace])) === 'late') {
        transport.abort();
        await inFlight;
      }
      await transport.close();
    },
  };
}
