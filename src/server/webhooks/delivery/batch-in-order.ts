import { randomBytes } from 'node:crypto';

import { type AttemptResult, sendWebhook } from './http-attempt';
import { webhookHeaders } from '../signing';
import type { Lookup, TargetPolicy } from '../ssrf';

/**
 * The network half of sending: one endpoint's due deliveries, already read from the database, sent one at
 * a time in order, stopping at the first that is not a delivery (a failure holds back the newer ones), at
 * the first answered only after WEBHOOK_SLOW_ATTEMPT_MS (the endpoint goes back in line), and at a
 * shutdown. No database here: it runs in the sending thread (thread-handle.ts), or on the main thread
 * where a test hands in a lookup function (which cannot cross to a thread).
 */

/** What a batch needs to send: plain data, so it can be posted to a thread. */
export type BatchToSend = {
  endpointId: number;
  url: string;
  /** The endpoint's signing secrets, decrypted: each attempt is signed at its own time. */
  secrets: string[];
  deliveries: { id: number; eventId: string; payload: string }[];
  /** With tracing on: each attempt gets a `traceparent` of its own (its span is recorded on the main thread). */
  traced: boolean;
  timeoutMs: number;
  slowMs: number;
  policy: TargetPolicy;
};

/** One attempt, as it came back: what the receiver did, when, and the trace ids it was sent with. */
export type SentAttempt = {
  deliveryId: number;
  result: AttemptResult;
  /** Unix ms, for the attempt's span. */
  startedAt: number;
  endedAt: number;
  trace: { traceId: string; spanId: string } | null;
  /** Answered only after slowMs: the batch stopped after it. */
  slow: boolean;
};

export type BatchOptions = {
  /** Aborted: the attempt in flight is cut short (and not counted). */
  signal: AbortSignal;
  /** Aborted: no further attempt starts (a shutdown lets the one in flight finish first). */
  finishing: AbortSignal;
  lookup?: Lookup;
  /** Called once an attempt has been unanswered for slowMs: its sender may be set free meanwhile. */
  onSlow: () => void;
};

export async function sendBatch(batch: BatchToSend, options: BatchOptions): Promise<SentAttempt[]> {
  const sent: SentAttempt[] = [];
  for (const delivery of batch.deliveries) {
    if (options.signal.aborted || options.finishing.aborted) break;
    const trace = batch.traced ? { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') } : null;
    const startedAt = Date.now();
    let slow = false;
    const timer = setTimeout(() => {
      slow = true;
      options.onSlow();
    }, batch.slowMs);
    let result: AttemptResult;
    try {
      const timestamp = Math.floor(startedAt / 1000);
      result = await sendWebhook({
        url: batch.url,
        body: delivery.payload,
        headers: { ...webhookHeaders(batch.secrets, delivery.eventId, timestamp, delivery.payload), ...(trace ? { traceparent: `00-${trace.traceId}-${trace.spanId}-01` } : {}) },
        policy: batch.policy,
        lookup: options.lookup,
        timeoutMs: batch.timeoutMs,
        signal: options.signal,
      });
    } finally {
      clearTimeout(timer);
    }
    // Cut short by a shutdown: not an attempt at all (sent again by whoever sends next).
    if (result.aborted) break;
    sent.push({ deliveryId: delivery.id, result, startedAt, endedAt: Date.now(), trace, slow });
    if (!result.ok || slow) break;
  }
  return sent;
}
