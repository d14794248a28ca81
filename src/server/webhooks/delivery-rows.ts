import 'server-only';

import { isInteger, parse } from 'lossless-json';

import { LAST_ERROR_MAX_LENGTH } from '@/shared/limits';
import type { WebhookDelivery } from '@/shared/webhooks';

import { isoTime } from './iso-time';

/** A delivery row as the API shows it: the columns read, and how a row becomes a WebhookDelivery. */

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

/**
 * `text` within `max` UTF-16 units, ending in `…` when cut (never inside a surrogate pair). `lastError` is
 * the worker's own words, or an unexpected exception's message, which could be of any length.
 */
function cutTo(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
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
    createdAt: isoTime(row.createdAtMs)!,
    nextAttemptAt: row.status === 'pending' ? isoTime(row.nextAttemptAtMs) : null,
    lastAttemptAt: isoTime(row.lastAttemptAtMs),
    lastStatus: row.lastStatus,
    lastError: row.lastError === null ? null : cutTo(row.lastError, LAST_ERROR_MAX_LENGTH),
    lastResponse: row.lastResponse,
    deliveredAt: isoTime(row.deliveredAtMs),
  };
}
