import 'server-only';

import { randomBytes } from 'node:crypto';

import { stringify } from 'lossless-json';

/*
 * The outbox: an event becomes rows of WebhookDelivery (one per endpoint that wants it) in the same
 * transaction as the change it reports, so an acknowledged change always has its event, even across a
 * crash, and a rolled-back change has none. For plants the database writes them: triggers on "Plant"
 * (the migrations named webhook_outbox_triggers, one per engine), which keep a create one statement, as
 * cheap as it was when no endpoint exists. The delivery worker sends the rows afterwards.
 */

export { TEST_EVENT_MESSAGE, TEST_EVENT_TYPE } from '@/shared/webhooks';

/**
 * The `webhook-id` of an event: the same for every endpoint and every attempt, so receivers can drop
 * repeats. `msg_` and 32 hex digits (128 random bits), as the triggers write the ids of plant events.
 */
export function newEventId(): string {
  return `msg_${randomBytes(16).toString('hex')}`;
}

/**
 * `{"type":…,"timestamp":…,"data":…}`, with bigint ids written exactly: what the triggers write too. A plant
 * event's `data` is the plant as answered (shared/plants.ts `toPlant`: id, then the fields declared in
 * shared/plants.ts); plants/fields.test.ts holds both engines' triggers to this, byte for byte on SQLite.
 */
export function eventPayload(type: string, data: unknown, at: Date): string {
  return stringify({ type, timestamp: at.toISOString(), data })!;
}

let endpointsMayExist = true;

/**
 * What this process knows of enabled endpoints, kept by its worker (each poll) and by endpoint changes made
 * here. It only decides whether a commit wakes the worker at once; a stale answer costs latency (the next
 * poll sends), never an event: the rows are written by the database either way.
 */
export function setEndpointsMayExist(value: boolean): void {
  endpointsMayExist = value;
}

const listeners = new Set<() => void>();

/** The worker of this process listens here, so a commit is sent at once instead of at the next poll. */
export function onDeliveriesQueued(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Call after rows were queued by this process: a test event, a retry, an endpoint enabled again. */
export function deliveriesQueued(): void {
  for (const listener of listeners) listener();
}

/** Call after a create or delete committed: its event may have been queued (by the outbox trigger). */
export function changeCommitted(): void {
  if (endpointsMayExist) deliveriesQueued();
}
