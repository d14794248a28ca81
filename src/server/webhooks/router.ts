import { z } from 'zod';

import { nextPageLinkHeader } from '@/shared/query-values';
import { type Context, createTRPCRouter, procedureNeeding } from '@/server/trpc/init';
import { BULK_ROWS_PER_UNIT, DELIVERY_PAGE_DEFAULT, DELIVERY_PAGE_MAX, DELIVERY_ROWS_PER_UNIT, FIXED_COSTS } from '@/shared/limits';
import {
  createWebhookEndpointInput,
  DELIVERY_STATUSES,
  deliveryIdParam,
  listDeliveriesInput,
  queueBatchInput,
  queueBatchOutput,
  retryAllInput,
  updateWebhookEndpointInput,
  webhookDeliverySchema,
  webhookEndpointIdParam,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookSecretSchema,
} from '@/shared/webhooks';

import { endpointBacklog } from './backlog';
import { discardWaiting, listDeliveries, retryAll, retryDelivery, sendTestEvent } from './deliveries';
import { countingCost, deletingCost } from './log-size';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from './endpoints';

const manageWebhooks = procedureNeeding('webhooks:manage');
const tags = ['webhooks'];
const oneEndpoint = { webhookEndpointNotFound: true } as const;
/**
 * A queue batch declares the call's one unit, and is charged its rows once it has found them, before they change,
 * as a bulk change of plants is: one unit per BULK_ROWS_PER_UNIT deliveries, the call's one included.
 */
const chargeRows = (ctx: Pick<Context, 'charge'>) => (rows: number) => ctx.charge(Math.max(1, Math.ceil(rows / BULK_ROWS_PER_UNIT)) - 1);

/**
 * Admin-only: webhook endpoints and their delivery log. Everything the admin page's webhook views need,
 * on both doors (tRPC for the page, REST under /api/webhooks for programs). A signing secret leaves the
 * server twice at most: when the endpoint is created and when it is rotated.
 */
export const webhooksRouter = createTRPCRouter({
  list: manageWebhooks
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/endpoints',
        tags,
        operationId: 'listWebhookEndpoints',
        summary: 'List the webhook endpoints',
        description: 'Every registered endpoint by id, with how many deliveries wait for it and how many were given up. Never a signing secret.',
        successDescription: 'Every endpoint by id, with its count of waiting and failed deliveries (never a secret)',
      },
    })
    .input(z.object({}))
    .output(z.array(webhookEndpointSchema))
    .declare({ cost: () => countingCost(undefined, ['pending', 'failed']), errors: {} })
    .query(() => listEndpoints()),

  get: manageWebhooks
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'One webhook endpoint',
        description: 'One endpoint: its URL, events, state and counts. Never its signing secret.',
        successDescription: 'The endpoint (never its secret)',
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookEndpointSchema)
    .declare({ cost: ({ id }) => countingCost(id, ['pending', 'failed']), errors: oneEndpoint })
    .query(({ input }) => getEndpoint(input.id)),

  create: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints',
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint',
        description:
          'Registers a URL to POST the chosen events to. The URL must be https to a public address (see `WEBHOOKS_ALLOW_HTTP` and `WEBHOOKS_ALLOW_PRIVATE`), checked now and before every attempt. The answer carries the signing secret, shown this once.',
        successDescription: 'The endpoint with its signing secret, shown this once',
      },
    })
    .input(createWebhookEndpointInput)
    .output(webhookEndpointWithSecretSchema)
    .declare({ cost: FIXED_COSTS.createWebhook, errors: { webhookUrlNotAllowed: true, webhooksNotConfigured: true } })
    .mutation(({ input }) => createEndpoint(input)),

  update: manageWebhooks
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint: URL, events, enabled, description',
        description: 'A merge patch of the URL, events, enabled and description. Enabling an endpoint clears its failure record and sends what waits for it.',
        successDescription: 'The endpoint as changed. Enabling it clears its failure record and sends what waits for it',
      },
    })
    .input(updateWebhookEndpointInput)
    .output(webhookEndpointSchema)
    .declare({ cost: ({ id }) => countingCost(id, ['pending', 'failed']), errors: { webhookUrlNotAllowed: true, ...oneEndpoint } })
    .mutation(({ input }) => updateEndpoint(input)),

  delete: manageWebhooks
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its delivery log',
        description: 'Deletes the endpoint with its delivery log; nothing more is sent to it.',
        successDescription: 'Deleted; no body',
      },
    })
    .input(webhookEndpointIdParam)
    .output(z.void())
    .declare({ cost: ({ id }) => deletingCost(id), errors: oneEndpoint })
    .mutation(({ input }) => deleteEndpoint(input.id)),

  rotateSecret: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/rotate-secret',
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Give the endpoint a new signing secret',
        description: 'A new signing secret, shown this once. For 24 hours deliveries carry two signatures, one per secret, so the receiver can switch. Takes no body.',
        successDescription: 'The new secret, shown this once; for 24 hours deliveries carry signatures with both',
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookSecretSchema)
    .declare({ cost: FIXED_COSTS.rotateWebhookSecret, errors: { ...oneEndpoint, webhooksNotConfigured: true } })
    .mutation(({ input }) => rotateSecret(input.id)),

  sendTest: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/test',
        tags,
        operationId: 'sendWebhookTest',
        summary: 'Send a webhook.test event to this endpoint',
        description: 'Queues a `webhook.test` event for this endpoint only, after what already waits for it. Takes no body.',
        successDescription: 'The delivery queued; follow it in the delivery log',
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookDeliverySchema)
    .declare({ cost: FIXED_COSTS.sendWebhookTest, errors: oneEndpoint })
    .mutation(({ input }) => sendTestEvent(input.id)),

  deliveries: manageWebhooks
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/endpoints/{id}/deliveries',
        tags,
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's delivery log, newest first",
        description:
          'One page of the deliveries to this endpoint, newest first, optionally only those in one state. Page with `before` = the last id of a page, or follow the `Link` header. Delivered and failed deliveries are kept 7 days.',
        successDescription: 'At most `limit` deliveries; the `Link` header points at the next (older) page when there is one',
        responseHeaders: z.object({
          Link: nextPageLinkHeader('`<…?limit=N&before=LASTID>; rel="next"` when older deliveries follow (RFC 8288)'),
        }),
      },
      mcp: {
        description:
          "A webhook endpoint's delivery log, newest first, at most limit (1 to 100, default 20) at a time, optionally only deliveries in one status (pending, delivered, failed). When older deliveries follow, the result has next: call this tool again with exactly those arguments for them.",
      },
    })
    .input(listDeliveriesInput)
    .output(z.array(webhookDeliverySchema).max(DELIVERY_PAGE_MAX))
    .declare({ cost: ({ limit = DELIVERY_PAGE_DEFAULT }) => Math.ceil(limit / DELIVERY_ROWS_PER_UNIT), errors: oneEndpoint })
    .query(async ({ ctx, input }) => {
      const limit = input.limit ?? DELIVERY_PAGE_DEFAULT;
      const page = await listDeliveries({ id: input.id, limit, before: input.before, status: input.status });
      if (page.nextBefore !== null) {
        ctx.responseHints.nextPageQuery = { limit: String(limit), before: String(page.nextBefore), ...(input.status ? { status: input.status } : {}) };
      }
      return page.deliveries;
    }),

  /**
   * The delivery log's head (tRPC only): deliveries per state, the oldest waiting ones (they go next), and
   * with `deliveryId` how many waiting deliveries are older than that one.
   */
  backlog: manageWebhooks
    .input(z.strictObject({ id: webhookEndpointIdParam.shape.id, deliveryId: deliveryIdParam.shape.id.optional() }))
    .declare({ cost: async ({ id, deliveryId }) => (await countingCost(id, DELIVERY_STATUSES)) + (deliveryId === undefined ? 0 : (await countingCost(id, ['pending'])) - 1), errors: oneEndpoint })
    .query(({ input }) => endpointBacklog(input.id, input.deliveryId)),

  /** The queue's "Retry all" (tRPC only): a batch of deliveries in a state due at once, oldest first. */
  retryAll: manageWebhooks
    .input(retryAllInput)
    .output(queueBatchOutput)
    .declare({ cost: 1, errors: oneEndpoint })
    .mutation(({ ctx, input }) => retryAll(input.id, input.state, input.after, chargeRows(ctx))),

  /** The queue's "Discard" (tRPC only): a batch of waiting deliveries given up, oldest first. */
  discardWaiting: manageWebhooks
    .input(queueBatchInput)
    .output(queueBatchOutput)
    .declare({ cost: 1, errors: oneEndpoint })
    .mutation(({ ctx, input }) => discardWaiting(input.id, input.after, chargeRows(ctx))),

  retry: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/deliveries/{id}/retry',
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery now',
        description: 'Makes a pending or failed delivery due at once (after older deliveries to the same endpoint). Takes no body.',
        successDescription: 'The delivery, due at once (after older deliveries to the same endpoint)',
      },
    })
    .input(deliveryIdParam)
    .output(webhookDeliverySchema)
    .declare({ cost: FIXED_COSTS.retryWebhookDelivery, errors: { webhookDeliveryNotFound: true } })
    .mutation(({ input }) => retryDelivery(input.id)),
});
