import 'server-only';

import { db } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { PREVIOUS_SECRET_GRACE_MS } from '@/shared/limits';
import type { WebhookEndpoint, WebhookEventType } from '@/shared/webhooks';

import { isoTime } from './iso-time';
import { deliveriesQueued, setEndpointsMayExist } from './outbox';
import { encryptSecret, newSigningSecret } from './secrets';
import { checkedUrl, secretKey } from './settings';
import type { Lookup } from './ssrf';

/**
 * Webhook endpoints, for admins (the router checks the permission): register, list, change, delete, and
 * rotate the signing secret. Knows nothing about HTTP: the worker sends, this keeps the rows.
 */


const encodeEvents = (events: readonly WebhookEventType[]) => `,${[...events].sort().join(',')},`;
const decodeEvents = (events: string) => events.split(',').filter(Boolean) as WebhookEventType[];

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
    failingSince: isoTime(row.failingSinceMs),
    createdAt: isoTime(row.createdAtMs)!,
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
