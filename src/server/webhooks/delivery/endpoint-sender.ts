import 'server-only';

import { db } from '@/server/db/client';
import type { Logger } from '@/server/log';

import type { LeasedEndpoint, PendingDelivery } from './due-batch';
import { releaseLease, renewLease } from './leases';
import { holdBackNewer, type RetryAt } from './record-attempts';
import type { AttemptResult } from './http-attempt';

/**
 * One sender: it drains one endpoint whose lease it holds, oldest delivery first, and gives the lease back.
 * What it needs of the worker that started it comes in as a Sender.
 */
export type Sender = {
  owner: string;
  leaseMs: number;
  log: Logger;
  /** True once the worker stops: no new attempt starts. */
  stopping: () => boolean;
  nextWake: (ms: number) => Promise<void>;
  wakeAt: (at: number) => void;
  /**
   * Sends due deliveries in order, up to the first that is not a delivery (batch-in-order.ts): what was
   * attempted, and whether the last went unanswered past WEBHOOK_SLOW_ATTEMPT_MS (its sender meanwhile set free).
   */
  sendBatch: (endpoint: LeasedEndpoint, deliveries: PendingDelivery[], stop: AbortSignal) => Promise<{ attempted: [PendingDelivery, AttemptResult][]; slow: boolean }>;
  record: (endpoint: LeasedEndpoint, attempted: [PendingDelivery, AttemptResult][]) => Promise<RetryAt | null>;
  /** Counts a failure of the worker itself on this endpoint; resolves to when the endpoint may be taken up again. */
  backOffAfterFailure: (endpointId: number) => number;
};

/** Deliveries read per query while draining one endpoint. */
const BATCH = 100;
/**
 * Deliveries sent per lease before the endpoint goes back in line, so busy endpoints take turns. Going
 * back in line costs a few queries and turns of the main loop, each slow under a flood of creates: an
 * endpoint that keeps up with hundreds of creates a second should not pay that every 200 (the turn before
 * the sending thread, when it got 20 a second).
 */
const TURN = 1_000;
/**
 * Deliveries sent and not yet written down, at most: a crash sends these again. A batch: while one lot is
 * written down (a commit), the sending thread sends what came after it, up to this many in all. A write
 * waits for a turn of the main loop whatever its size; at 20 (before the thread) the thread would wait for
 * one every 20 deliveries, and under a flood of creates a turn is tens of milliseconds.
 */
const UNWRITTEN_MAX = BATCH;
/** How long deliveries answered 2xx may wait to be written down together (see drainEndpoint). */
const RECORD_EVERY_MS = 200;
/** How long a sender keeps an endpoint with nothing to send, waiting for the next event. */
const LINGER_MS = 250;

export async function drainEndpoint(endpointId: number, sender: Sender): Promise<void> {
  const { owner, leaseMs, log, nextWake, wakeAt, sendBatch, record, backOffAfterFailure } = sender;
  let leaseLost = false;
  // Stops the batch being sent at once (no further attempt of it) when the lease is lost: another
  // instance may take the endpoint up now.
  const lost = new AbortController();
  const renew = async () => {
    if (!(await renewLease(endpointId, owner, leaseMs))) {
      leaseLost = true;
      lost.abort();
    }
  };
  const heartbeat = setInterval(() => void renew().catch((error: unknown) => log.warn({ err: error, endpointId }, 'webhook worker: lease renewal failed')), Math.max(50, leaseMs / 3));
  heartbeat.unref();
  // Until when the lease is given back: now (back in line at once), or later after a failure.
  let releaseAt: number | undefined;
  // What was sent and answered 2xx is written down while the next batch is read and sent (one write at a
  // time, in order), gathered up to half of UNWRITTEN_MAX deliveries or RECORD_EVERY_MS: under a stream of
  // creates a batch is often one event, and each write is a commit (on SQLite an fsync that holds the process, as a
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
  const read = (after: number) =>
    Promise.all([
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
  /** A read begun ahead that is then not needed: its failure is nobody's. */
  const dropped = (reading: Promise<unknown>) => void reading.catch(() => {});
  const sendTurn = async () => {
    let sent = 0;
    let lingered = false;
    let after = 0;
    let reading = read(after);
    try {
      while (!sender.stopping() && !leaseLost && sent < TURN) {
        if (recordFailed) throw recordFailed.error;
        const [endpoint, batch]: [LeasedEndpoint | null, PendingDelivery[]] = await reading;
        if (!endpoint?.enabled || endpoint.leaseOwner !== owner) return;
        lastEndpoint = endpoint;
        if (batch.length === 0) {
          // Under a steady stream the next event is a moment away: wait for it with the lease held,
          // instead of giving the lease back and taking it again for every event.
          if (lingered) return;
          lingered = true;
          await nextWake(LINGER_MS);
          reading = read(after);
          continue;
        }
        lingered = false;
        // The due ones, oldest first, up to the first not due yet (waiting for its retry: it holds back the newer).
        const now = Date.now();
        const firstNotDue = batch.findIndex((delivery) => Number(delivery.nextAttemptAtMs) > now);
        const due = firstNotDue === -1 ? batch : batch.slice(0, firstNotDue);
        const notDue = firstNotDue === -1 ? undefined : batch[firstNotDue];
        // At most UNWRITTEN_MAX sent and not written down: after a crash, at most that many arrive twice.
        if (unwritten >= UNWRITTEN_MAX) {
          flush(endpoint);
          await recording;
          // Thrown by recorded() once the turn ends.
          if (recordFailed) break;
        }
        const handed = due.slice(0, UNWRITTEN_MAX - unwritten);
        // Sent one after another, oldest first, up to the first failure, by the sending thread; meanwhile
        // the next batch is read, past the ones handed over. Written down together (one commit for the
        // lot); a crash before that write sends them again: at least once.
        const sending = handed.length > 0 ? sendBatch(endpoint, handed, lost.signal) : Promise.resolve({ attempted: [], slow: false });
        reading = read(handed.at(-1)?.id ?? after);
        const { attempted, slow: wentSlow } = await sending;
        unwritten += attempted.length;
        sent += attempted.length;
        if (attempted.length > 0) after = attempted.at(-1)![0].id;
        const allAnswered = attempted.every(([, result]) => result.ok);
        const reachedNotDue = notDue && handed.length === due.length && attempted.length === handed.length && allAnswered;
        if (!allAnswered || reachedNotDue) {
          await recorded();
          const waitsUntil = await record(endpoint, attempted);
          unwritten -= attempted.length;
          const head = waitsUntil ?? (reachedNotDue && { id: notDue.id, nextAttemptAtMs: notDue.nextAttemptAtMs });
          if (head) {
            await holdBackNewer(endpointId, head);
            wakeAt(Number(head.nextAttemptAtMs));
            return;
          }
        } else if (attempted.length > 0) {
          if (unrecorded.length === 0) firstUnrecordedAt = Date.now();
          unrecorded.push(...attempted);
          // Half the unwritten bound: the thread sends the other half while these are written.
          if (unrecorded.length >= UNWRITTEN_MAX / 2 || Date.now() - firstUnrecordedAt >= RECORD_EVERY_MS) flush(endpoint);
        }
        // Stopped early (a failure, a shutdown, a lost lease), or a slow endpoint: it gives its sender up
        // after each answer, back in line behind the others.
        if (attempted.length < handed.length || wentSlow) return;
      }
    } finally {
      dropped(reading);
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
