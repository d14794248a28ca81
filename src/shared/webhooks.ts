import { z } from 'zod';

import { pageLimit } from './query-values';

/**
 * The webhook shapes: shared by the webhooks router (validation and the OpenAPI document) and the admin
 * page. Every message names its field, because both doors show it to a person as is.
 */

export const WEBHOOK_EVENTS = ['plant.created', 'plant.deleted'] as const;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const DELIVERY_PAGE_MAX = 100;
export const DELIVERY_PAGE_DEFAULT = 20;
export const WEBHOOK_URL_MAX_LENGTH = 2000;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 200;
const INT32_MAX = 2 ** 31 - 1;

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
  ).meta({ description, override: { type: 'integer', format: 'int32', minimum: 1 } });

const webhookUrl = z
  .string({ error: 'url must be a string' })
  .trim()
  .min(1, { error: 'url must not be empty' })
  .max(WEBHOOK_URL_MAX_LENGTH, { error: `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters` })
  .meta({ description: 'Where events are POSTed: https (http to loopback only with WEBHOOKS_ALLOW_HTTP=1)', example: 'https://example.com/hooks/plants' });

const events = z
  .array(webhookEventType, { error: 'events must be an array of event types' })
  .min(1, { error: 'events must name at least one event type' })
  .max(WEBHOOK_EVENTS.length, { error: 'events must name each event type at most once' })
  .refine((list) => new Set(list).size === list.length, { error: 'events must name each event type at most once' })
  .meta({ description: 'The event types sent to this endpoint' });

const description = z
  .string({ error: 'description must be a string' })
  .max(WEBHOOK_DESCRIPTION_MAX_LENGTH, { error: `description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters` })
  .regex(/^\P{Cc}*$/u, { error: 'description must not contain control characters' })
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

const isoTime = z.string().meta({ format: 'date-time' });

export const webhookEndpointSchema = z
  .object({
    id: z.int(),
    url: z.string(),
    events: z.array(webhookEventType),
    enabled: z.boolean(),
    description: z.string(),
    disabledReason: z.string().nullable().meta({ description: 'Why the server disabled the endpoint (failing for 5 days); null otherwise' }),
    failingSince: isoTime.nullable().meta({ description: 'Since when attempts have failed with no success in between; null while all is well' }),
    createdAt: isoTime,
    pending: z.int().meta({ description: 'Deliveries waiting to be sent' }),
    failed: z.int().meta({ description: 'Deliveries given up after their retries (kept 7 days)' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({ secret: z.string().meta({ description: 'The signing secret (whsec_…): shown this once' }) })
  .meta({ id: 'WebhookEndpointWithSecret' });

export const webhookSecretSchema = z
  .object({
    secret: z.string().meta({ description: 'The new signing secret (whsec_…): shown this once' }),
    previousValidUntil: isoTime.meta({ description: 'Until when deliveries are also signed with the previous secret' }),
  })
  .meta({ id: 'WebhookSecret' });

export const webhookDeliverySchema = z
  .object({
    id: z.int(),
    endpointId: z.int(),
    eventId: z.string().meta({ description: 'The webhook-id header: the same for every attempt' }),
    type: z.string(),
    plantId: z
      .bigint()
      .meta({ override: { type: 'integer', format: 'int64' } })
      .nullable()
      .meta({ description: 'The id of the plant a plant.created or plant.deleted event is about, exact; null for webhook.test' }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int(),
    createdAt: isoTime,
    nextAttemptAt: isoTime.nullable().meta({ description: 'When the next attempt is due (pending only; it also waits for older deliveries to this endpoint)' }),
    lastAttemptAt: isoTime.nullable(),
    lastStatus: z.int().nullable().meta({ description: "The HTTP status of the last attempt; null when no answer came" }),
    lastError: z.string().nullable().meta({ description: 'What went wrong on the last attempt' }),
    lastResponse: z.string().nullable().meta({ description: "At most 4 KiB of the receiver's last answer, as text: show it escaped" }),
    deliveredAt: isoTime.nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;
export type WebhookEventType = z.infer<typeof webhookEventType>;
