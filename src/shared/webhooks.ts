import { z } from 'zod';

import { NO_CONTROL_CHARACTERS } from './control-characters';
import { DELIVERY_PAGE_DEFAULT, DELIVERY_PAGE_MAX, kib, LAST_ERROR_MAX_LENGTH, WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_RESPONSE_MAX_BYTES, WEBHOOK_URL_MAX_LENGTH } from './limits';
import { pageLimit } from './query-values';

/**
 * The webhook shapes: shared by the webhooks router (validation and the OpenAPI document) and the admin
 * page. Every message names its field, because both doors show it to a person as is.
 */

export const WEBHOOK_EVENTS = ['plant.created', 'plant.deleted'] as const;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
/** Sent to one endpoint on request ("send test event"); nobody subscribes to it. */
export const TEST_EVENT_TYPE = 'webhook.test';
/** The `message` of every test event (the document declares it as a constant). */
export const TEST_EVENT_MESSAGE = 'a test event from Plant Store';
const INT32_MAX = 2 ** 31 - 1;
/** What an answer's timestamps are: `Date.prototype.toISOString`, at most 27 characters. */
const ISO_TIME_MAX_LENGTH = 30;
/** A whole number the document calls int32, from `min`. */
const int32 = (min: number, max = INT32_MAX) => z.int().min(min).max(max).meta({ format: 'int32' });

export const webhookEventType = z.enum(WEBHOOK_EVENTS, { error: `events are ${WEBHOOK_EVENTS.join(' and ')}` });

/** An id in the path: decimal digits from REST, a number from the tRPC door. */
const idFromPath = (field: string, description: string) =>
  (
    z.preprocess(
      (value) => (typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value),
      z
        .int({ error: `${field} must be a positive integer` })
        .min(1, { error: `${field} must be a positive integer` })
        .max(INT32_MAX, { error: `${field} must be a positive integer` }),
    ) as unknown as z.ZodType<number, number | string>
  ).meta({ description, override: { type: 'integer', format: 'int32', minimum: 1, maximum: INT32_MAX } });

const webhookUrl = z
  .string({ error: 'url must be a string' })
  .trim()
  .min(1, { error: 'url must not be empty' })
  .max(WEBHOOK_URL_MAX_LENGTH, { error: `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters` })
  .meta({ format: 'uri', description: 'Where events are POSTed: https (http to loopback only with WEBHOOKS_ALLOW_HTTP=1)', example: 'https://example.com/hooks/plants' });

const events = z
  .array(webhookEventType, { error: 'events must be an array of event types' })
  .min(1, { error: 'events must name at least one event type' })
  .max(WEBHOOK_EVENTS.length, { error: 'events must name each event type at most once' })
  .refine((list) => new Set(list).size === list.length, { error: 'events must name each event type at most once' })
  .meta({ description: 'The event types sent to this endpoint' });

const description = z
  .string({ error: 'description must be a string' })
  .max(WEBHOOK_DESCRIPTION_MAX_LENGTH, { error: `description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters` })
  .regex(NO_CONTROL_CHARACTERS, { error: 'description must not contain control characters' })
  .meta({ description: 'A note for people: what receives these events' });

const enabled = z.boolean({ error: 'enabled must be true or false' }).meta({ description: 'Whether events are queued and sent to this endpoint' });

export const createWebhookEndpointInput = z
  .strictObject({ url: webhookUrl, events, enabled: enabled.optional(), description: description.optional() })
  .meta({ id: 'NewWebhookEndpoint', description: 'A webhook endpoint to register. Its signing secret is made by the server and shown once.' });

export const webhookEndpointIdParam = z.object({ id: idFromPath('id', 'The id of the webhook endpoint') });

export const updateWebhookEndpointInput = z.strictObject({
  id: idFromPath('id', 'The id of the webhook endpoint'),
  url: webhookUrl.optional(),
  events: events.optional(),
  enabled: enabled.optional(),
  description: description.optional(),
});

export const listDeliveriesInput = z.object({
  id: idFromPath('id', 'The id of the webhook endpoint'),
  limit: pageLimit(DELIVERY_PAGE_MAX, DELIVERY_PAGE_DEFAULT, 'The most deliveries to return, newest first.'),
  before: idFromPath('before', 'Return only deliveries with a smaller id (the last id of the previous page).').optional(),
  status: z.enum(DELIVERY_STATUSES, { error: `status is ${DELIVERY_STATUSES.join(', ')}` }).optional().meta({ description: 'Only deliveries in this state' }),
});

export const deliveryIdParam = z.object({ id: idFromPath('id', 'The id of the delivery') });

/** The words a discarded delivery's last error says: it was given up by a person, not by the retry schedule. */
export const DISCARDED_ERROR = 'discarded by an admin, not sent';

/**
 * The queue's bulk actions (tRPC only): retry every delivery in a state (pending: due now; failed: waiting again),
 * or discard the waiting ones (marked failed, not sent), the oldest first, at most DELIVERY_BATCH_MAX a call,
 * after `after` (the `nextAfter` of the call before).
 */
export const queueBatchInput = z.strictObject({
  id: idFromPath('id', 'The id of the webhook endpoint'),
  after: z.int().min(0).max(INT32_MAX).optional(),
});
export const retryAllInput = queueBatchInput.extend({ state: z.enum(['pending', 'failed'], { error: 'state is pending or failed' }) });
export const queueBatchOutput = z.object({ done: z.int().nonnegative(), nextAfter: z.int().nullable() });
export type QueueBatch = z.infer<typeof queueBatchOutput>;

const isoTime = z.string().max(ISO_TIME_MAX_LENGTH).meta({ format: 'date-time' });

/** The URL as stored: the WHATWG parser's writing of it, which the SSRF guard keeps within the input's limit. */
const storedUrl = z.string().max(WEBHOOK_URL_MAX_LENGTH).meta({ format: 'uri' });

/** Standard Webhooks' `whsec_` and the base64 of 32 random bytes (webhooks/secrets.ts). */
const signingSecret = z.string().regex(/^whsec_[A-Za-z0-9+/]{43}=$/).max(50);

export const webhookEndpointSchema = z
  .object({
    id: int32(1),
    url: storedUrl,
    events: z.array(webhookEventType).max(WEBHOOK_EVENTS.length),
    enabled: z.boolean(),
    description,
    disabledReason: z.string().max(200).nullable().meta({ description: 'Why the server disabled the endpoint (failing for 5 days); null otherwise' }),
    failingSince: isoTime.nullable().meta({ description: 'Since when attempts have failed with no success in between; null while all is well' }),
    createdAt: isoTime,
    pending: int32(0).meta({ description: 'Deliveries waiting to be sent' }),
    failed: int32(0).meta({ description: 'Deliveries given up after their retries (kept 7 days)' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({ secret: signingSecret.meta({ description: 'The signing secret (whsec_…): shown this once' }) })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const webhookSecretSchema = z
  .object({
    secret: signingSecret.meta({ description: 'The new signing secret (whsec_…): shown this once' }),
    previousValidUntil: isoTime.meta({ description: 'Until when deliveries are also signed with the previous secret' }),
  })
  .meta({ id: 'WebhookSecret' });

export const webhookDeliverySchema = z
  .object({
    id: int32(1),
    endpointId: int32(1),
    eventId: z
      .string()
      .max(36)
      .regex(/^msg_[0-9A-Za-z_-]{1,32}$/)
      .meta({ description: 'The webhook-id header (`msg_` and 32 hex digits): the same for every attempt' }),
    type: z.enum([...WEBHOOK_EVENTS, TEST_EVENT_TYPE]),
    plantId: z
      .bigint()
      .meta({ override: { type: 'integer', format: 'int64' } })
      .nullable()
      .meta({ description: 'The id of the plant a plant.created or plant.deleted event is about, exact; null for webhook.test' }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: int32(0),
    createdAt: isoTime,
    nextAttemptAt: isoTime.nullable().meta({ description: 'When the next attempt is due (pending only; it also waits for older deliveries to this endpoint)' }),
    lastAttemptAt: isoTime.nullable(),
    lastStatus: int32(0, 999).nullable().meta({ description: 'The HTTP status of the last attempt; null when no answer came' }),
    lastError: z.string().max(LAST_ERROR_MAX_LENGTH).nullable().meta({ description: 'What went wrong on the last attempt' }),
    // N bytes of UTF-8 decode to at most N characters.
    lastResponse: z.string().max(WEBHOOK_RESPONSE_MAX_BYTES).nullable().meta({ description: `At most ${kib(WEBHOOK_RESPONSE_MAX_BYTES)} of the receiver's last answer, as text: show it escaped` }),
    deliveredAt: isoTime.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
export type WebhookEventType = z.infer<typeof webhookEventType>;
