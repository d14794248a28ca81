import 'server-only';

import { randomBytes } from 'node:crypto';

import { stringify } from 'lossless-json';

import type { db } from '@/server/db/client';
import type { WebhookEventType } from '@/shared/webhooks';

/**
 * The outbox: an event becomes rows of WebhookDelivery (one per endpoint that wants it) in the same
 * transaction as the change it reports, so an acknowledged change always has its event, even across a
 * crash, and a rolled-back change has none. The delivery worker sends the rows afterwards.
 */
/** Sent to one endpoint on request ("send test event"); nobody subscribes to it. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The `webhook-id` of an event: the same for every endpoint and every attempt, so receivers can drop repeats. */
export function newEventId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}

/** `{"type":…,"timestamp":…,"data":…}`, with bigint ids written exactly. */
export function eventPayload(type: string, data: unknown, at: Date): string {
  return stringify({ type, timestamp: at.toISOString(), data })!;
}

type RawClient = Pick<typeof db, '$executeRaw'>;

/**
 * The one statement that queues an event for every enabled endpoint subscribed to its type. Run it with
 * the transaction's client (`tx`, or inside `db.$transaction([...])`); it resolves to the number of
 * deliveries queued. With no endpoint it writes nothing. One SQL text for both engines (the casts let
 * PostgreSQL type the parameters of the SELECT list).
 */
export function queueEvent(client: RawClient, type: WebhookEventType, data: unknown) {
  const now = Date.now();
  const payload = eventPayload(type, data, new Date(now));
  return client.$executeRaw`INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
    SELECT "id", CAST(${newEventId()} AS TEXT), CAST(${type} AS TEXT), CAST(${payload} AS TEXT), CAST(${now} AS BIGINT), CAST(${now} AS BIGINT)
    FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE ${`%,${type},%`}`;
}

const listeners = new Set<() => void>();

/** The worker of this process listens here, so a commit is sent at once instead of at the next poll. */
export function onEventsQueued(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Call after the transaction that queued `count` deliveries has committed. */
export function eventsQueued(count: number): void {
  if (count > 0) for (const listener of listeners) listener();
}
