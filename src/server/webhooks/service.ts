import 'server-only';

import { isInteger, parse } from 'lossless-json';

import { db, isForeignKeyViolation, isRecordMissing } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { LAST_ERROR_MAX_LENGTH, type WebhookDelivery, type WebhookEndpoint, type WebhookEventType } from '@/shared/webhooks';

import { deliveriesQueued, eventPayload, newEventId, setEndpointsMayExist, TEST_EVENT_MESSAGE, TEST_EVENT_TYPE } from './outbox';
import { decryptSecret, encryptSecret, newSigningSecret } from './secrets';
import { checkWebhookTarget, type Lookup, type TargetPolicy, TargetRefused } from './ssrf';

/**
 * Webhook endpoints and their delivery log, for admins (the router checks the permission). Knows nothing
 * about HTTP: the worker sends, this keeps the rows.
 */

/** A rotated-out secret still signs for this long, so receivers can switch without losing a delivery. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;
/** Delivered and failed deliveries are kept this long for the delivery log, then swept. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** What the entry point hands down at start: the same key and target policy the worker gets. */
export type WebhookSettings = { key: Buffer | null; policy: TargetPolicy };

// Until the entry point configures it: no key (webhooks off) and the strictest policy.
let settings: WebhookSettings = { key: null, policy: { allowHttp: false, allowPrivate: false } };

/** Called once at start by the entry point, from WEBHOOKS_SECRET_KEY, WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE. */
export function configureWebhookService(handedDown: WebhookSettings): void {
  settings = handedDown;
}

function secretKey(): Buffer {
  const { key } = settings;
  if (!key) {
    throw new AppError('webhooksNotConfigured', 'webhooks are off on this server: set WEBHOOKS_SECRET_KEY (32 random bytes, e.g. `openssl rand -base64 32`) and restart it');
  }
  return key;
}

/** The URL as the WHATWG parser writes it, once it passed the SSRF guard against what it resolves to now. */
async function checkedUrl(url: string, lookup?: Lookup): Promise<string> {
  try {
    return (await checkWebhookTarget(url, settings.policy, { lookup })).url.href;
  } catch (error) {
    if (error instanceof TargetRefused) throw new AppError('webhookUrlNotAllowed', error.message, 'url');
    throw error;
  }
}

const encodeEvents = (events: readonly WebhookEventType[]) => `,${[...events].sort().join(',')},`;
const decodeEvents = (events: string) => events.split(',').filter(Boolean) as WebhookEventType[];
/**
 * `text` within `max` UTF-16 units, ending in `…` when cut (never inside a surrogate pair). `lastError` is
 * the worker's own words, or an unexpected exception's message, which could be of any length.
 */
function cutTo(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

const iso = (ms: bigint | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

const endpointColumns = {
  id: true,
  url: true,
  events: true,
  enabled: true,
  description: true,
  disabledReason: true,
  failingSinceMs: true,
  createdAtMs: true,
} as const;

type EndpointRow = { id: number; url: string; events: string; enabled: boolean; description: string; disabledReason: string | null; failingSinceMs: bigint | null; createdAtMs: bigint };

function toEndpoint(row: EndpointRow, counts: { pending: number; failed: number }): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: decodeEvents(row.events),
    enabled: row.enabled,
    description: row.description,
    disabledReason: row.disabledReason,
    failingSince: iso(row.failingSinceMs),
    createdAt: iso(row.createdAtMs)!,
    ...counts,
  };
}

async function deliveryCounts(endpointIds?: number[]): Promise<Map<number, { pending: number; failed: number }>> {
  const groups = await db.webhookDelivery.groupBy({
    by: ['endpointId', 'status'],
    where: { status: { in: ['pending', 'failed'] }, ...(endpointIds ? { endpointId: { in: endpointIds } } : {}) },
    _count: { _all: true },
  });
  const counts = new Map<number, { pending: number; failed: number }>();
  for (const group of groups) {
    const entry = counts.get(group.endpointId) ?? { pending: 0, failed: 0 };
    entry[group.status as 'pending' | 'failed'] = group._count._all;
    counts.set(group.endpointId, entry);
  }
  return counts;
}

export const noEndpoint = (id: number) => new AppError('webhookEndpointNotFound', `no webhook endpoint with id ${id}`, 'id');

export async function listEndpoints(): Promise<WebhookEndpoint[]> {
  const rows = await db.webhookEndpoint.findMany({ orderBy: { id: 'asc' }, select: endpointColumns });
  const counts = await deliveryCounts();
  return rows.map((row) => toEndpoint(row, counts.get(row.id) ?? { pending: 0, failed: 0 }));
}

export async function getEndpoint(id: number): Promise<WebhookEndpoint> {
  const row = await db.webhookEndpoint.findUnique({ where: { id }, select: endpointColumns });
  if (!row) throw noEndpoint(id);
  return toEndpoint(row, (await deliveryCounts([id])).get(id) ?? { pending: 0, failed: 0 });
}

export type NewEndpoint = { url: string; events: WebhookEventType[]; enabled?: boolean; description?: string };

/** Registers an endpoint; its signing secret is made here and returned this once (only a ciphertext is kept). */
export async function createEndpoint(input: NewEndpoint, options: { lookup?: Lookup } = {}): Promise<WebhookEndpoint & { secret: string }> {
  const url = await checkedUrl(input.url, options.lookup);
  const key = secretKey();
  const secret = newSigningSecret();
  // The ciphertext is bound to the endpoint's id, known once the row exists: both writes are one transaction.
  const row = await db.$transaction(async (tx) => {
    const created = await tx.webhookEndpoint.create({
      data: {
        url,
        events: encodeEvents(input.events),
        enabled: input.enabled ?? true,
        description: input.description ?? '',
        secret: '',
        createdAtMs: BigInt(Date.now()),
      },
      select: { id: true },
    });
    return tx.webhookEndpoint.update({ where: { id: created.id }, data: { secret: encryptSecret(secret, key, created.id) }, select: endpointColumns });
  });
  if (row.enabled) setEndpointsMayExist(true);
  return { ...toEndpoint(row, { pending: 0, failed: 0 }), secret };
}

export type EndpointChange = { id: number; url?: string; events?: WebhookEventType[]; enabled?: boolean; description?: string };

/**
 * Changes what is given. Enabling an endpoint clears its failure record, and its waiting deliveries go
 * out again; disabling keeps them waiting (no new events are queued for it meanwhile).
 */
export async function updateEndpoint(change: EndpointChange, options: { lookup?: Lookup } = {}): Promise<WebhookEndpoint> {
  const url = change.url === undefined ? undefined : await checkedUrl(change.url, options.lookup);
  const { count } = await db.webhookEndpoint.updateMany({
    where: { id: change.id },
    data: {
      ...(url === undefined ? {} : { url }),
      ...(change.events === undefined ? {} : { events: encodeEvents(change.events) }),
      ...(change.description === undefined ? {} : { description: change.description }),
      ...(change.enabled === undefined ? {} : { enabled: change.enabled, disabledReason: null, ...(change.enabled ? { failingSinceMs: null } : {}) }),
    },
  });
  if (count === 0) throw noEndpoint(change.id);
  if (change.enabled) {
    setEndpointsMayExist(true);
    deliveriesQueued();
  }
  return getEndpoint(change.id);
}

/** Deletes the endpoint and its delivery log; what was waiting for it is dropped. */
export async function deleteEndpoint(id: number): Promise<void> {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id } });
  if (count === 0) throw noEndpoint(id);
}

/**
 * A new signing secret, returned this once. For a day the previous one still signs too (both signatures
 * go in webhook-signature), so a receiver can switch over without rejecting a delivery.
 */
export async function rotateSecret(id: number): Promise<{ secret: string; previousValidUntil: string }> {
  const key = secretKey();
  const row = await db.webhookEndpoint.findUnique({ where: { id }, select: { secret: true } });
  if (!row) throw noEndpoint(id);
  const secret = newSigningSecret();
  const until = Date.now() + PREVIOUS_SECRET_GRACE_MS;
  const { count } = await db.webhookEndpoint.updateMany({
    where: { id, secret: row.secret },
    data: { secret: encryptSecret(secret, key, id), previousSecret: row.secret, previousSecretUntilMs: BigInt(until) },
  });
  // Another rotation won the race: that one's secret is the current one, so this one must not be shown.
  if (count === 0) throw noEndpoint(id);
  return { secret, previousValidUntil: new Date(until).toISOString() };
}

/** The secrets an attempt signs with now: the current one, and the previous one during its day of grace. */
export function signingSecrets(
  endpoint: { id: number; secret: string; previousSecret: string | null; previousSecretUntilMs: bigint | null },
  key: Buffer,
  now = Date.now(),
): string[] {
  const secrets = [decryptSecret(endpoint.secret, key, endpoint.id)];
  if (endpoint.previousSecret && endpoint.previousSecretUntilMs !== null && Number(endpoint.previousSecretUntilMs) > now) {
    try {
      secrets.push(decryptSecret(endpoint.previousSecret, key, endpoint.id));
    } catch {
      // A previous secret from before a key change signs nothing; the current one is what counts.
    }
  }
  return secrets;
}

export const deliveryColumns = {
  id: true,
  endpointId: true,
  eventId: true,
  type: true,
  payload: true,
  status: true,
  attempts: true,
  createdAtMs: true,
  nextAttemptAtMs: true,
  lastAttemptAtMs: true,
  lastStatus: true,
  lastError: true,
  lastResponse: true,
  deliveredAtMs: true,
} as const;

type DeliveryRow = {
  id: number;
  endpointId: number;
  eventId: string;
  type: string;
  payload: string;
  status: string;
  attempts: number;
  createdAtMs: bigint;
  nextAttemptAtMs: bigint;
  lastAttemptAtMs: bigint | null;
  lastStatus: number | null;
  lastError: string | null;
  lastResponse: string | null;
  deliveredAtMs: bigint | null;
};

/**
 * The plant a plant.* event is about, read exactly from the body that was (or will be) sent: the delivery
 * log names it, and an int64 must not pass through a double on the way.
 */
function plantIdOf(type: string, payload: string): bigint | null {
  if (!type.startsWith('plant.')) return null;
  try {
    const body = parse(payload, null, (token) => (isInteger(token) ? BigInt(token) : Number(token))) as { data?: { id?: unknown } };
    return typeof body.data?.id === 'bigint' ? body.data.id : null;
  } catch {
    return null;
  }
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    type: row.type as WebhookDelivery['type'],
    plantId: plantIdOf(row.type, row.payload),
    status: row.status as WebhookDelivery['status'],
    attempts: row.attempts,
    createdAt: iso(row.createdAtMs)!,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAtMs) : null,
    lastAttemptAt: iso(row.lastAttemptAtMs),
    lastStatus: row.lastStatus,
    lastError: row.lastError === null ? null : cutTo(row.lastError, LAST_ERROR_MAX_LENGTH),
    lastResponse: row.lastResponse,
    deliveredAt: iso(row.deliveredAtMs),
  };
}

/** Sends a `webhook.test` event to this endpoint only, in its turn after what is already waiting for it. */
export async function sendTestEvent(id: number): Promise<WebhookDelivery> {
  const now = Date.now();
  try {
    const row = await db.webhookDelivery.create({
      data: {
        endpointId: id,
        eventId: newEventId(),
        type: TEST_EVENT_TYPE,
        payload: eventPayload(TEST_EVENT_TYPE, { endpointId: id, message: TEST_EVENT_MESSAGE }, new Date(now)),
        createdAtMs: BigInt(now),
        nextAttemptAtMs: BigInt(now),
      },
      select: deliveryColumns,
    });
    deliveriesQueued();
    return toDelivery(row);
  } catch (error) {
    // The endpoint does not exist (the foreign key refuses the row).
    if (isForeignKeyViolation(error)) throw noEndpoint(id);
    throw error;
  }
}

export type DeliveryPage = { deliveries: WebhookDelivery[]; nextBefore: number | null };

/** An endpoint's delivery log, newest first, paged by id. */
export async function listDeliveries(input: { id: number; limit: number; before?: number; status?: string }): Promise<DeliveryPage> {
  const rows = await db.webhookDelivery.findMany({
    where: { endpointId: input.id, ...(input.status ? { status: input.status } : {}), ...(input.before === undefined ? {} : { id: { lt: input.before } }) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
    select: deliveryColumns,
  });
  // A delivery row exists only for an existing endpoint (deleting one deletes its deliveries), so only an
  // empty page needs to ask whether the endpoint is there.
  if (rows.length === 0 && !(await db.webhookEndpoint.findUnique({ where: { id: input.id }, select: { id: true } }))) throw noEndpoint(input.id);
  const deliveries = rows.slice(0, input.limit).map(toDelivery);
  return { deliveries, nextBefore: rows.length > input.limit ? deliveries[deliveries.length - 1]!.id : null };
}

/**
 * "Retry now": the delivery is due at once. A failed one gets one more attempt (its 24 hours are over);
 * a delivered one is sent again. It still goes after older deliveries waiting for the same endpoint.
 */
export async function retryDelivery(id: number): Promise<WebhookDelivery> {
  let row;
  try {
    row = await db.webhookDelivery.update({ where: { id }, data: { status: 'pending', nextAttemptAtMs: BigInt(Date.now()) }, select: deliveryColumns });
  } catch (error) {
    if (isRecordMissing(error)) throw new AppError('webhookDeliveryNotFound', `no webhook delivery with id ${id}`, 'id');
    throw error;
  }
  deliveriesQueued();
  return toDelivery(row);
}

export type WebhookCounts = { pending: number; failing: number; failed: number };

let countsCache: { at: number; counts: Promise<WebhookCounts> } | undefined;

/**
 * For /api/health: deliveries waiting, endpoints whose attempts are failing, deliveries given up. Kept
 * for a second, so a health check flood costs the database little.
 */
export function webhookCounts(now = Date.now()): Promise<WebhookCounts> {
  if (countsCache && now - countsCache.at < 1_000) return countsCache.counts;
  const counts = Promise.all([
    db.webhookDelivery.count({ where: { status: 'pending' } }),
    db.webhookEndpoint.count({ where: { failingSinceMs: { not: null } } }),
    db.webhookDelivery.count({ where: { status: 'failed' } }),
  ]).then(([pending, failing, failed]) => ({ pending, failing, failed }));
  countsCache = { at: now, counts };
  counts.catch(() => (countsCache = undefined));
  return counts;
}

const SWEEP_BATCH = 500;

/** Deletes delivered and failed deliveries older than the retention, a batch at a time. */
export async function sweepOldDeliveries(now = Date.now()): Promise<number> {
  const cutoff = BigInt(now - DELIVERY_RETENTION_MS);
  let deleted = 0;
  for (;;) {
    const rows = await db.webhookDelivery.findMany({
      where: { createdAtMs: { lt: cutoff }, status: { not: 'pending' } },
      orderBy: { createdAtMs: 'asc' },
      take: SWEEP_BATCH,
      select: { id: true },
    });
    if (rows.length === 0) return deleted;
    const { count } = await db.webhookDelivery.deleteMany({ where: { id: { in: rows.map((row) => row.id) }, status: { not: 'pending' } } });
    deleted += count;
    if (rows.length < SWEEP_BATCH) return deleted;
  }
}
