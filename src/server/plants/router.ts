import { tracked } from '@trpc/server';
import { z } from 'zod';

import { idempotencyKey } from '@/server/idempotency/key';
import { countUserNames, createPlant, deletePlant, listPlants, listUserNames, suggestPlantId, updatePlant } from '@/server/plants/service';
import { listPlantsInput, newPlantSchema, patchPlantInput, plantFilters, plantIdParam } from '@/shared/plants';
import { deletePlantsInput, PLANT_SORT_KEYS, plantChangesInput, plantPageInput, plantPageOutput, restorePlantsInput, retagPlantsInput, tagSuggestionsInput } from '@/shared/plant-table';
import { nextPageLinkHeader } from '@/shared/query-values';
import { asTrpcError, type Context, createTRPCRouter, procedureNeeding, protectedProcedure } from '@/server/trpc/init';
import { AppError } from '@/shared/errors';
import { COUNTED_ROWS_PER_UNIT, FIXED_COSTS, IF_NONE_MATCH_MAX_LENGTH, NAME_MAX_LENGTH, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, REPLAYED_EVENTS_PER_UNIT, ROWS_PER_UNIT, searchCost, TABLE_PAGE_COST, TAG_MAX_LENGTH } from '@/shared/limits';

import { plantAnswer } from './answer';
import { bulkDelete, bulkPlantsCost, bulkRetag, bulkSelectionCost } from './bulk';
import { middleCountRows } from './counts';
import { exportFile } from './export';
import { importsRouter } from './import/router';
import { plantChanges, REPLAY_MAX } from './live/feed';
import { pagePlants } from './page';
import { suggestTags, tagSuggestionCost } from './tags';
import { restorePlants } from './undo';
import { plantListVersion } from './versions';

/** Whose open live streams a call counts against: the token's, as the request limit is. */
const tokenId = (ctx: Context) => (ctx.auth.status === 'signedIn' ? ctx.auth.tokenId : 0);

const tags = ['plants'];

/** The export's query: the list's filters, and the table's order as two parameters (`sort`, `dir`). */
const exportPlantsQuery = z.object({
  ...plantFilters,
  sort: z
    .enum(PLANT_SORT_KEYS, { error: `sort must be one of ${PLANT_SORT_KEYS.join(', ')}` })
    .optional()
    .meta({ description: 'The order; ties go by id. Default: id.' }),
  dir: z.enum(['asc', 'desc'], { error: 'dir must be asc or desc' }).optional().meta({ description: 'asc (default) or desc.' }),
});

/** The export's result: the file's text, chunk by chunk, as it is made (the document calls it a string). */
const csvChunks = z
  .custom<AsyncIterable<string>>((value) => typeof value === 'object' && value !== null && Symbol.asyncIterator in value, { error: 'the export is a stream of text' })
  .meta({ override: { type: 'string' } });

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
        description:
          'Creates a plant with the id the client chose (any int64, kept exact: write it as a JSON number with every digit). The caller owns it. An `Idempotency-Key` makes a retry safe.',
        successDescription: 'The plant as stored (or, with `Idempotent-Replayed: true`, the answer the first request with this Idempotency-Key got)',
        requestHeaders: idempotencyHeader,
        responseHeaders: replayedHeader,
      },
      mcp: {
        description:
          `Add a plant to the catalogue. You choose its id: an int64 that no plant in the whole store has yet. name is 1 to ${NAME_MAX_LENGTH} characters, tag (optional) 1 to ${TAG_MAX_LENGTH}. Returns the plant as stored.`,
      },
    })
    .input(newPlantSchema)
    .output(plantAnswer)
    .declare({ cost: FIXED_COSTS.writePlant, errors: { plantIdTaken: 'when a plant has this id already, even one you cannot see' } })
    .mutation(({ ctx, input }) => createPlant(ctx.actor, input)),

  list: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants',
        tags,
        operationId: 'listPlants',
        summary: 'List the plants you have access to, by id ascending',
        description:
          'One page of the plants the caller has access to (a member: their own; an admin: all), by id ascending, optionally filtered by tag, name text or (admins) owner. Page with `after` = the last id of a page, or follow the `Link` header until it is absent.',
        successDescription: 'At most `limit` plants; the `Link` header points at the next page when there is one',
        requestHeaders: z.object({
          'If-None-Match': z.string().max(IF_NONE_MATCH_MAX_LENGTH).regex(/^[\t\x20-\x7E]*$/).optional().meta({
            description:
              'The `ETag` of a list you have: when nothing you can see has changed since (no plant of yours, for an admin no plant at all, created, deleted, renamed or re-tagged), the answer is 304 with no body, and is charged one unit whatever the limit (docs/api.md, "Conditional lists"). Several ETags, comma-separated, and weak ones (`W/"…"`) are compared as RFC 9110 says; `*` matches any current list: 304 unless the request is refused.',
          }),
        }),
        responseHeaders: z.object({
          Link: nextPageLinkHeader('`<…/api/plants?limit=N&after=LASTID>; rel="next"` when more plants follow (RFC 8288)'),
          ETag: z.string().max(29).regex(/^"[\w-]{27}"$/).meta({ description: 'A strong validator of this answer: send it back as `If-None-Match` to poll without reading the list again' }),
        }),
      },
      conditional: plantListVersion,
      mcp: {
        description:
          `List the plants you have access to, by id ascending, at most limit (1 to ${PAGE_LIMIT_MAX}, default ${PAGE_LIMIT_DEFAULT}) at a time. Filters, alone or together: tag (exactly this tag), q (the name contains this text, in any case), owner (admins only: a user name). When more plants follow, the result has next: call plants_list again with exactly those arguments for the following page.`,
      },
    })
    .input(listPlantsInput)
    .output(z.array(plantAnswer).max(PAGE_LIMIT_MAX))
    .declare({ cost: ({ limit = PAGE_LIMIT_DEFAULT, q }) => Math.ceil(limit / ROWS_PER_UNIT) + searchCost(q), errors: { ownerFilterForAdmins: true } })
    .query(async ({ ctx, input }) => {
      const { limit = PAGE_LIMIT_DEFAULT, after, tag, q, owner } = input;
      const filters = { ...(tag === undefined ? {} : { tag }), ...(q === undefined ? {} : { q }), ...(owner === undefined ? {} : { owner }) };
      // The REST door asks for the caller's version with the rows when it would otherwise be a query of its own.
      const page = await listPlants(ctx.actor, { limit, after, ...filters }, { withVersion: ctx.responseHints.versionWanted === true });
      // The next page's link keeps the filters, so following it pages through the same selection.
      if (page.nextAfter !== null) ctx.responseHints.nextPageQuery = { limit: String(limit), ...filters, after: String(page.nextAfter) };
      if (page.version !== undefined) ctx.responseHints.version = page.version;
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
      },
      mcp: {
        description:
          `Rename or re-tag one plant by its id: name renames it, tag re-tags it, tag null removes its tag; give at least one of them. The id never changes. Returns the plant as stored.`,
      },
    })
    .input(patchPlantInput)
    .output(plantAnswer)
    .declare({ cost: FIXED_COSTS.writePlant, errors: { emptyPatch: 'when neither name nor tag is given', plantNotFound: 'when no plant has this id or you have no access to it' } })
    .mutation(({ ctx, input: { id, ...patch } }) => updatePlant(ctx.actor, id, patch)),

  /** The admin page's table: a page with its total and position (tRPC only; REST pages with `after`). */
  page: protectedProcedure
    .input(plantPageInput)
    .output(plantPageOutput)
    .declare({
      cost: async (input, { actor }) => TABLE_PAGE_COST + Math.ceil(input.size / ROWS_PER_UNIT) + searchCost(input.q) + Math.ceil((await middleCountRows(actor, input)) / COUNTED_ROWS_PER_UNIT),
      errors: { ownerFilterForAdmins: true },
    })
    .query(({ ctx, input }) => pagePlants(ctx.actor, input)),

  /** The admin page's bulk delete, of ticked plants or of every matching one, a call at a time (tRPC only). */
  deleteMany: protectedProcedure
    .input(deletePlantsInput)
    .declare({ cost: ({ selection }) => bulkSelectionCost(selection), errors: { ownerFilterForAdmins: true } })
    .mutation(({ ctx, input }) => bulkDelete(ctx.actor, ctx.charge, input.selection, input.keepForUndo)),

  /** The admin page's bulk re-tag (null removes the tag), like deleteMany (tRPC only). */
  retagMany: protectedProcedure
    .input(retagPlantsInput)
    .declare({ cost: ({ selection }) => bulkSelectionCost(selection), errors: { ownerFilterForAdmins: true } })
    .mutation(({ ctx, input }) => bulkRetag(ctx.actor, ctx.charge, input.selection, input.tag, input.onlyFrom)),

  /** Undo of a delete made from the page, by its deleter, for a few minutes (tRPC only). */
  restore: protectedProcedure
    .input(restorePlantsInput)
    .declare({ cost: ({ ids }) => bulkPlantsCost(ids), errors: {} })
    .mutation(({ ctx, input }) => restorePlants(ctx.actor, input.ids)),

  /** The tags that exist, with counts, by a case-insensitive prefix: the tag filter's choices (tRPC only). */
  tags: protectedProcedure
    .input(tagSuggestionsInput)
    .declare({ cost: (input, { actor }) => tagSuggestionCost(actor, input), errors: { ownerFilterForAdmins: true } })
    .query(({ ctx, input }) => suggestTags(ctx.actor, input)),

  /**
   * The live feed: every change to the plants the caller sees, as it commits, on any instance (tRPC's SSE
   * subscription; `tracked` ids let a dropped connection resume where it stopped).
   */
  changes: protectedProcedure
    .input(plantChangesInput)
    .declare({ cost: (input) => FIXED_COSTS.openLiveFeed + (input?.lastEventId ? Math.ceil(REPLAY_MAX / REPLAYED_EVENTS_PER_UNIT) : 0), errors: {} })
    .subscription(async function* ({ ctx, input, signal }) {
      try {
        for await (const [id, event] of plantChanges(ctx.actor, tokenId(ctx), input?.lastEventId, signal)) yield tracked(id, event);
      } catch (error) {
        // Raised while streaming, after the guard's translation: a refusal keeps its code (429 is not retried
        // by the client; a bare error would read as a 500, which it retries at once, for ever).
        if (error instanceof AppError) throw asTrpcError(error);
        throw error;
      }
    }),

  /** An id that is free now, for the add form (tRPC only). */
  suggestId: protectedProcedure.declare({ cost: 1, errors: {} }).query(async ({ ctx }) => ({ id: await suggestPlantId(ctx.actor) })),

  /** User names for the owner filter (admins, tRPC only). */
  owners: procedureNeeding('plants:any')
    .declare({ cost: async () => 1 + Math.ceil((await countUserNames()) / ROWS_PER_UNIT), errors: {} })
    .query(() => listUserNames()),

  delete: protectedProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/plants/{id}',
        tags,
        operationId: 'deletePlant',
        summary: 'Delete a plant',
        description: 'Deletes a plant the caller has access to. A plant the caller has no access to is answered exactly as one that does not exist (404).',
        successDescription: 'Deleted; no body',
      },
      mcp: {
        description:
          'Delete one plant by its id, for good. There is no result on success.',
      },
    })
    .input(plantIdParam)
    .output(z.void())
    .declare({ cost: FIXED_COSTS.writePlant, errors: { plantNotFound: 'when no plant has this id (or not any more), or you have no access to it' } })
    .mutation(({ ctx, input }) => deletePlant(ctx.actor, input.id)),

  /**
   * Every plant of the caller's view as one CSV file, streamed (plants/export.ts): REST's `GET /plants/export`,
   * or a streaming tRPC link. A failure before the first byte is the contract's JSON error; one after it can only
   * cut the file short, so the connection is reset and a partial file is never taken for a whole one.
   */
  export: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants/export',
        tags,
        operationId: 'exportPlants',
        summary: 'Every plant you have access to, as a CSV file',
        description:
          'The plants `GET /plants` would list with the same filters, all of them, in one CSV file (RFC 4180: a UTF-8 byte order mark, a header line, CRLF line ends; ids exact; text that a spreadsheet would run as a formula starts with an apostrophe). Admins get the owner and creation time too. Streamed; charged to the token at 1,000 rows per batch, and one export per token runs at a time.',
        successDescription: 'The CSV file: `id,name,tag` (members) or `id,name,tag,owner,created` (admins)',
        responseHeaders: z.object({
          'Content-Disposition': z
            .string()
            .max(64)
            .regex(/^attachment; filename="plants-\d{4}-\d{2}-\d{2}\.csv"$/)
            .meta({ description: '`attachment; filename="plants-YYYY-MM-DD.csv"`' }),
        }),
      },
      file: 'text/csv; charset=utf-8; header=present',
    })
    .input(exportPlantsQuery)
    .output(csvChunks)
    // The door's unit; each batch is charged as it is read, waiting for the bucket rather than failing half written.
    .declare({ cost: 1, errors: { ownerFilterForAdmins: true, tooManyRequests: 'when an export of this token is still running, or the server has as many open as it takes' } })
    .query(({ ctx, input: { sort, dir = 'asc', ...filters }, signal }) => {
      ctx.responseHints.headers = { ...ctx.responseHints.headers, 'Content-Disposition': `attachment; filename="plants-${new Date().toISOString().slice(0, 10)}.csv"` };
      const caller = {
        tokenId: tokenId(ctx),
        actor: ctx.actor,
        headers: (headers: Record<string, string>) => void (ctx.responseHints.headers = { ...ctx.responseHints.headers, ...headers }),
      };
      return exportFile(caller, ctx.takeUnits, { ...filters, ...(sort === undefined ? {} : { sort: { key: sort, dir } }) }, signal);
    }),

  /** CSV import: a file in parts, its preview, its apply in the background (import/router.ts). */
  imports: importsRouter,
});
