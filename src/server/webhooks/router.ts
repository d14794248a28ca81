import { z } from 'zod';

import { createTRPCRouter, procedureNeeding } from '@/server/trpc/init';
import {
  createWebhookEndpointInput,
  DELIVERY_PAGE_DEFAULT,
  deliveryIdParam,
  listDeliveriesInput,
  updateWebhookEndpointInput,
  webhookDeliverySchema,
  webhookEndpointIdParam,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
  webhookSecretSchema,
} from '@/shared/webhooks';

import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from './service';
import { endpointBacklog } from './backlog';

const manageWebhooks = procedureNeeding('webhooks:manage');
const tags = ['webhooks'];
const signedInAdmin = { 401: 'The bearer token is missing or not valid', 403: 'Only admins manage webhooks' };
const noEndpoint = { 404: 'No webhook endpoint with this id' };
const notConfigured = { 503: 'Webhooks are off: the server has no WEBHOOKS_SECRET_KEY' };

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
        successDescription: 'Every endpoint by id, with its count of waiting and failed deliveries (never a secret)',
        errorResponses: signedInAdmin,
      },
    })
    .input(z.object({}))
    .output(z.array(webhookEndpointSchema))
    .query(() => listEndpoints()),

  get: manageWebhooks
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'getWebhookEndpoint',
        summary: 'One webhook endpoint',
        successDescription: 'The endpoint (never its secret)',
        errorResponses: { 400: 'The id is not a positive integer', ...signedInAdmin, ...noEndpoint },
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookEndpointSchema)
    .query(({ input }) => getEndpoint(input.id)),

  create: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints',
        tags,
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint',
        successDescription: 'The endpoint with its signing secret, shown this once',
        errorResponses: { 400: 'The body is not valid, or the URL is not allowed (https only; no private addresses)', ...signedInAdmin, ...notConfigured },
      },
    })
    .input(createWebhookEndpointInput)
    .output(webhookEndpointWithSecretSchema)
    .mutation(({ input }) => createEndpoint(input)),

  update: manageWebhooks
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint: URL, events, enabled, description',
        successDescription: 'The endpoint as changed. Enabling it clears its failure record and sends what waits for it',
        errorResponses: { 400: 'The body is not valid, or the URL is not allowed', ...signedInAdmin, ...noEndpoint },
      },
    })
    .input(updateWebhookEndpointInput)
    .output(webhookEndpointSchema)
    .mutation(({ input }) => updateEndpoint(input)),

  delete: manageWebhooks
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/webhooks/endpoints/{id}',
        tags,
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its delivery log',
        successDescription: 'Deleted; no body',
        errorResponses: { 400: 'The id is not a positive integer', ...signedInAdmin, ...noEndpoint },
      },
    })
    .input(webhookEndpointIdParam)
    .output(z.void())
    .mutation(({ input }) => deleteEndpoint(input.id)),

  rotateSecret: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/rotate-secret',
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Give the endpoint a new signing secret',
        successDescription: 'The new secret, shown this once; for 24 hours deliveries carry signatures with both',
        errorResponses: { 400: 'The id is not a positive integer', ...signedInAdmin, ...noEndpoint, ...notConfigured },
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookSecretSchema)
    .mutation(({ input }) => rotateSecret(input.id)),

  sendTest: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/endpoints/{id}/test',
        tags,
        operationId: 'sendWebhookTest',
        summary: 'Send a webhook.test event to this endpoint',
        successDescription: 'The delivery queued; follow it in the delivery log',
        errorResponses: { 400: 'The id is not a positive integer', ...signedInAdmin, ...noEndpoint },
      },
    })
    .input(webhookEndpointIdParam)
    .output(webhookDeliverySchema)
    .mutation(({ input }) => sendTestEvent(input.id)),

  deliveries: manageWebhooks
    .meta({
      openapi: {
        method: 'GET',
        path: '/webhooks/endpoints/{id}/deliveries',
        tags,
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's delivery log, newest first",
        successDescription: 'At most `limit` deliveries; the `Link` header points at the next (older) page when there is one',
        responseHeaders: z.object({
          Link: z.string().optional().meta({ description: '`<…?limit=N&before=LASTID>; rel="next"` when older deliveries follow (RFC 8288)' }),
        }),
        errorResponses: { 400: 'id, limit, before or status is not valid', ...signedInAdmin, ...noEndpoint },
      },
    })
    .input(listDeliveriesInput)
    .output(z.array(webhookDeliverySchema))
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
    .query(({ input }) => endpointBacklog(input.id, input.deliveryId)),

  retry: manageWebhooks
    .meta({
      openapi: {
        method: 'POST',
        path: '/webhooks/deliveries/{id}/retry',
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Retry a delivery now',
        successDescription: 'The delivery, due at once (after older deliveries to the same endpoint)',
        errorResponses: { 400: 'The id is not a positive integer', ...signedInAdmin, 404: 'No delivery with this id' },
      },
    })
    .input(deliveryIdParam)
    .output(webhookDeliverySchema)
    .mutation(({ input }) => retryDelivery(input.id)),
});
