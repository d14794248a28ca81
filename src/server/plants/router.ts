import { tracked } from '@trpc/server';
import { z } from 'zod';

import { idempotencyKey } from '@/server/idempotency/key';
import { createPlant, deletePlant, listPlants, listUserNames, suggestPlantId, updatePlant } from '@/server/plants/service';
import {
  deletePlantsInput,
  plantChangesInput,
  restorePlantsInput,
  retagPlantsInput,
  tagSuggestionsInput,
  listPlantsInput,
  newPlantSchema,
  PAGE_LIMIT_DEFAULT,
  patchPlantInput,
  plantIdParam,
  plantPageInput,
} from '@/shared/plants';
import { asTrpcError, type Context, createTRPCRouter, procedureNeeding, protectedProcedure } from '@/server/trpc/init';
import { AppError } from '@/shared/errors';

import { plantAnswer } from './answer';
import { bulkDelete, bulkRetag } from './bulk';
import { plantChanges } from './live/feed';
import { pagePlants } from './page';
import { suggestTags } from './tags';
import { restorePlants } from './undo';

/** Whose budgets a call draws on (rows, open streams): the token's, as the request limit is. */
const tokenKey = (ctx: Context) => (ctx.auth.status === 'signedIn' ? String(ctx.auth.tokenId) : 'none');

const tags = ['plants'];
const unauthorized = { 401: 'The bearer token is missing or not valid' };

/** Read by the REST chain (http/rest/idempotency.ts); the tRPC door has no such header. */
const idempotencyHeader = z.object({
  'Idempotency-Key': idempotencyKey.optional().meta({
    description:
      'Makes a retry safe: the first request with a key is carried out and its answer kept for 24 hours; a retry with the same key and the same body (as JSON values: member order, white space and number spelling aside) gets that answer again and creates nothing. Keys belong to the token\'s user.',
  }),
});
const replayedHeader = z.object({
  'Idempotent-Replayed': z.literal('true').optional().meta({ description: 'Present when this is the kept answer of an earlier request with the same Idempotency-Key' }),
});

export const plantsRouter = createTRPCRouter({
  create: protectedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plants',
        tags,
        operationId: 'createPlant',
        summary: 'Create a plant',
        successDescription: 'The plant as stored (or, with `Idempotent-Replayed: true`, the answer the first request with this Idempotency-Key got)',
        requestHeaders: idempotencyHeader,
        responseHeaders: replayedHeader,
        errorResponses: {
          400: 'The body is not a valid NewPlant, the id is taken, or the Idempotency-Key is malformed',
          ...unauthorized,
          408: 'The body stalled: nothing arrived for 10 seconds',
          409: 'A request with this Idempotency-Key is still being carried out',
          413: 'The body is larger than 64 KiB',
          415: 'The body is not sent as application/json',
          422: 'This Idempotency-Key was already used with a different body',
        },
      },
    })
    .input(newPlantSchema)
    .output(plantAnswer)
    .mutation(({ ctx, input }) => createPlant(ctx.actor, input)),

  list: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants',
        tags,
        operationId: 'listPlants',
        summary: 'List the plants you have access to, by id ascending',
        successDescription: 'At most `limit` plants; the `Link` header points at the next page when there is one',
        responseHeaders: z.object({
          Link: z.string().optional().meta({ description: '`<…/api/plants?limit=N&after=LASTID>; rel="next"` when more plants follow (RFC 8288)' }),
        }),
        errorResponses: { 400: 'limit, after or a filter (tag, q, owner) is not valid, or a member sent owner', ...unauthorized },
      },
    })
    .input(listPlantsInput)
    .output(z.array(plantAnswer))
    .query(async ({ ctx, input }) => {
      const { limit = PAGE_LIMIT_DEFAULT, after, tag, q, owner } = input;
      const filters = { ...(tag === undefined ? {} : { tag }), ...(q === undefined ? {} : { q }), ...(owner === undefined ? {} : { owner }) };
      const page = await listPlants(ctx.actor, { limit, after, ...filters });
      // The next page's link keeps the filters, so following it pages through the same selection.
      if (page.nextAfter !== null) ctx.responseHints.nextPageQuery = { limit: String(limit), ...filters, after: String(page.nextAfter) };
      return page.plants;
    }),

  update: protectedProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/plants/{id}',
        tags,
        operationId: 'updatePlant',
        summary: 'Rename or re-tag a plant (JSON merge patch)',
        description:
          'The body is a JSON merge patch (RFC 7396), sent as `application/merge-patch+json` or `application/json`: `{"name": …}` renames, `{"tag": …}` re-tags, `{"tag": null}` removes the tag. The id cannot change.',
        successDescription: 'The plant as stored after the change',
        errorResponses: {
          400: 'The id is not an int64, the patch is empty, or it has a field other than name and tag, or a value that breaks a rule',
          ...unauthorized,
          404: 'No plant with this id that you have access to',
          408: 'The body stalled: nothing arrived for 10 seconds',
          413: 'The body is larger than 64 KiB',
          415: 'The body is not sent as application/merge-patch+json or application/json',
        },
      },
    })
    .input(patchPlantInput)
    .output(plantAnswer)
    .mutation(({ ctx, input }) => updatePlant(ctx.actor, input.id, { name: input.name, tag: input.tag })),

  /** The admin page's table: a page with its total and position (tRPC only; REST pages with `after`). */
  page: protectedProcedure.input(plantPageInput).query(({ ctx, input }) => pagePlants(ctx.actor, input)),

  /** The admin page's bulk delete, of ticked plants or of every matching one, a call at a time (tRPC only). */
  deleteMany: protectedProcedure.input(deletePlantsInput).mutation(({ ctx, input }) => bulkDelete(ctx.actor, tokenKey(ctx), input.selection, input.keepForUndo)),

  /** The admin page's bulk re-tag (null removes the tag), like deleteMany (tRPC only). */
  retagMany: protectedProcedure.input(retagPlantsInput).mutation(({ ctx, input }) => bulkRetag(ctx.actor, tokenKey(ctx), input.selection, input.tag)),

  /** Undo of a delete made from the page, by its deleter, for a few minutes (tRPC only). */
  restore: protectedProcedure.input(restorePlantsInput).mutation(({ ctx, input }) => restorePlants(ctx.actor, input.ids)),

  /** The tags that exist, with counts, by a case-insensitive prefix: the tag filter's choices (tRPC only). */
  tags: protectedProcedure.input(tagSuggestionsInput).query(({ ctx, input }) => suggestTags(ctx.actor, input)),

  /**
   * The live feed: every change to the plants the caller sees, as it commits, on any instance (tRPC's SSE
   * subscription; `tracked` ids let a dropped connection resume where it stopped).
   */
  changes: protectedProcedure.input(plantChangesInput).subscription(async function* ({ ctx, input, signal }) {
    try {
      for await (const [seq, event] of plantChanges(ctx.actor, tokenKey(ctx), input?.lastEventId, signal)) yield tracked(String(seq), event);
    } catch (error) {
      // Raised while streaming, after the guard's translation: a refusal keeps its code (429 is not retried
      // by the client; a bare error would read as a 500, which it retries at once, for ever).
      if (error instanceof AppError) throw asTrpcError(error);
      throw error;
    }
  }),

  /** An id that is free now, for the add form (tRPC only). */
  suggestId: protectedProcedure.query(async ({ ctx }) => ({ id: await suggestPlantId(ctx.actor) })),

  /** User names for the owner filter (admins, tRPC only). */
  owners: procedureNeeding('plants:any').query(() => listUserNames()),

  delete: protectedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/plants/{id}',
        tags,
        operationId: 'deletePlant',
        summary: 'Delete a plant',
        successDescription: 'Deleted; no body',
        errorResponses: { 400: 'The id is not an int64', ...unauthorized, 404: 'No plant with this id that you have access to' },
      },
    })
    .input(plantIdParam)
    .output(z.void())
    .mutation(({ ctx, input }) => deletePlant(ctx.actor, input.id)),
});
