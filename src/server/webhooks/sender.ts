import 'server-only';

import { db } from '@/server/db/client';
import type { Logger } from '@/server/log';

import type { LeasedEndpoint, PendingDelivery } from './attempt';
import { releaseLease, renewLease } from './leases';
import { holdBackNewer, type RetryAt } from './record-attempts';
import type { AttemptResult } from './send';

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
  /** One attempt, and whether it went unanswered past WEBHOOK_SLOW_ATTEMPT_MS (its sender meanwhile set free). */
  attempt: (endpoint: LeasedEndpoint, delivery: PendingDelivery) => Promise<{ result: AttemptResult; slow: boolean }>;
  record: (endpoint: LeasedEndpoint, attempted: [PendingDelivery, AttemptResult][]) => Promise<RetryAt | null>;
  /** Counts a failure of the worker itself on this endpoint; resolves to when the endpoint may be taken up again. */
  backOffAfterFailure: (endpointId: number) => number;
};

/** Deliveries read per query while draining one endpoint. */
const BATCH = 100;
/** Deliveries sent per lease before the endpoint goes back in line, so busy endpoints take turns. */
const TURN = 200;
/** Deliveries sent and not yet written down, at most: a crash sends these again. */
const UNWRITTEN_MAX = 20;
/** How long deliveries answered 2xx may wait to be written down together (see drainEndpoint). */
const RECORD_EVERY_MS = 200;
/** How long a sender keeps an endpoint with nothing to send, waiting for the next event. */
const LINGER_MS = 250;

export async function drainEndpoint(endpointId: number, sender: Sender): Promise<void> {
  const { owner, leaseMs, log, nextWake, wakeAt, attempt, record, backOffAfterFailure } = sender;
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
    while (!sender.stopping() && !leaseLost && sent < TURN) {
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
        if (sender.stopping() || leaseLost) break;
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
        const { result, slow: answeredSlowly } = await attempt(endpoint, delivery);
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
