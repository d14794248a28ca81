import 'server-only';

import { z } from 'zod';

import { createTRPCRouter, protectedProcedure } from '@/server/trpc/init';
import { FIXED_COSTS, IMPORT_APPLY_ROWS_PER_UNIT, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, IMPORT_PART_ROWS_PER_UNIT, IMPORT_ROWS_PER_UNIT, IMPORTS_KEPT_PER_USER } from '@/shared/limits';
import { IMPORT_ROWS_PAGE_DEFAULT, IMPORT_ROWS_PAGE_MAX, importIdParam, importPartInput, importRowSchema, importRowsInput, importSchema } from '@/shared/plant-import';
import { nextPageLinkHeader } from '@/shared/query-values';

import { applyImport, stopImport } from './apply';
import { applyUnits, partUnits, takeUnitsOf } from './charge';
import { endUpload, getImport, importRows, listImports, receivePart, startImport } from './store';
import { reportApplyError } from './work';

const tags = ['plants'];
const oneImport = { importNotFound: true } as const;
const mib = `${IMPORT_MAX_BYTES / 1024 / 1024} MiB`;
const rowsAtMost = IMPORT_MAX_ROWS.toLocaleString('en-US');

/**
 * CSV import (docs/api.md, "CSV import"): start an import, send the file in parts, end the upload to get the
 * whole preview (what would be created, changed, left as it is, and refused with why), then apply it in the
 * background, watching its progress, with Stop. The same procedures serve the admin page's import dialog.
 */
export const importsRouter = createTRPCRouter({
  list: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants/imports',
        tags,
        operationId: 'listPlantImports',
        summary: 'Your imports, newest first',
        description: `The imports you started and still keep (at most ${IMPORTS_KEPT_PER_USER}, each a day after its last change), newest first.`,
        successDescription: 'Your imports, newest first',
      },
    })
    .input(z.object({}))
    .output(z.array(importSchema).max(IMPORTS_KEPT_PER_USER))
    .declare({ cost: 1, errors: {} })
    .query(({ ctx }) => listImports(ctx.actor)),

  create: protectedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plants/imports',
        tags,
        operationId: 'startPlantImport',
        summary: 'Start a CSV import of plants',
        description: `A new import, waiting for its file in parts (putPlantImportPart). Takes no body. You keep your ${IMPORTS_KEPT_PER_USER} newest imports for a day; starting another lets go of your oldest one not being applied.`,
        successDescription: 'The import, receiving',
      },
      mcp: {
        description: `Start importing plants from a CSV file (the export's format: a first line id,name,tag; owner and created columns are ignored). Then send the file with plants_imports_part (parts of at most 64 KiB, numbered from 1), end it with plants_imports_preview to see what would happen, and apply it with plants_imports_run.`,
      },
    })
    .input(z.object({}))
    .output(importSchema)
    .declare({ cost: FIXED_COSTS.startImport, errors: {} })
    .mutation(({ ctx }) => startImport(ctx.actor)),

  get: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants/imports/{id}',
        tags,
        operationId: 'getPlantImport',
        summary: 'One import: its preview and its progress',
        description: 'The import as it is now: its state, what its preview plans, and what its apply has done so far. Poll it while it applies.',
        successDescription: 'The import',
      },
    })
    .input(importIdParam)
    .output(importSchema)
    .declare({ cost: 1, errors: oneImport })
    .query(({ ctx, input }) => getImport(ctx.actor, input.id)),

  part: protectedProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/plants/imports/{id}/parts/{part}',
        tags,
        operationId: 'putPlantImportPart',
        summary: 'Send one part of the CSV file',
        description: `The file's text, as \`text/csv\` (UTF-8), in parts of at most 64 KiB numbered from 1, in order: cut it anywhere between characters (\`split -C 60k\` cuts between lines). Each part's rows are checked as it arrives, as a create checks its body, and planned against the plants as they are. Sending a part again with the same text (a retry) answers the import as it is and reads nothing twice. A file of more than ${rowsAtMost} rows or ${mib} is refused. Charged one unit per ${IMPORT_PART_ROWS_PER_UNIT} rows beyond the body's.`,
        contentTypes: ['text/csv'],
        successDescription: 'The import, with the rows read so far and what the preview plans for them',
      },
      mcp: {
        description: `Send one part of an import's CSV file: id is the import, part its number (1, then 2, …, in order), csv the text (at most 64 KiB; cut anywhere between characters). Sending the same part again is harmless.`,
      },
    })
    .input(importPartInput)
    .output(importSchema)
    // The door's unit and the body's; the rows found are charged as they are read (charge.ts).
    .declare({ cost: 1, errors: { ...oneImport, importState: true, invalidCsv: 'when the file cannot be read as plants' } })
    .mutation(({ ctx, input }) => receivePart(ctx.actor, input, (rows) => ctx.charge(partUnits(rows)))),

  preview: protectedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plants/imports/{id}/preview',
        tags,
        operationId: 'previewPlantImport',
        summary: 'End the upload: the whole preview',
        description:
          'Says the file has no more parts: its last record is read, and the import is ready to apply. The answer counts the rows to create (ids no plant has), to change (plants you may change, as a PATCH may), unchanged, and refused (each with its reason: listPlantImportRows with plan=refused). Takes no body.',
        successDescription: 'The import, ready (or refused: problem says why)',
      },
    })
    .input(importIdParam)
    .output(importSchema)
    .declare({ cost: FIXED_COSTS.stepImport, errors: { ...oneImport, invalidCsv: true } })
    .mutation(({ ctx, input }) => endUpload(ctx.actor, input.id)),

  rows: protectedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plants/imports/{id}/rows',
        tags,
        operationId: 'listPlantImportRows',
        summary: "An import's rows: what each will do, or did, and why a row is refused",
        description:
          'A page of the rows read, by line, all or those of one plan (refused: each with the error value and message a create or a patch of it would answer). Page with `after` = the last line of a page, or follow the `Link` header.',
        successDescription: 'At most `limit` rows; the `Link` header points at the next page when there is one',
        responseHeaders: z.object({ Link: nextPageLinkHeader('`<…?limit=N&after=LINE>; rel="next"` when more rows follow (RFC 8288)') }),
      },
      mcp: {
        description: `The rows of an import by line, at most limit (1 to ${IMPORT_ROWS_PAGE_MAX}, default ${IMPORT_ROWS_PAGE_DEFAULT}) at a time; plan=refused gives the rows that will not be applied, each with its error value and message. When more follow, the result has next: call this tool again with exactly those arguments.`,
      },
    })
    .input(importRowsInput)
    .output(z.array(importRowSchema).max(IMPORT_ROWS_PAGE_MAX))
    .declare({ cost: ({ limit = IMPORT_ROWS_PAGE_DEFAULT }) => 1 + Math.ceil(limit / IMPORT_ROWS_PER_UNIT), errors: oneImport })
    .query(async ({ ctx, input }) => {
      const limit = input.limit ?? IMPORT_ROWS_PAGE_DEFAULT;
      const page = await importRows(ctx.actor, { ...input, limit });
      if (page.nextAfter !== null) ctx.responseHints.nextPageQuery = { limit: String(limit), after: String(page.nextAfter), ...(input.plan ? { plan: input.plan } : {}) };
      return page.rows;
    }),

  run: protectedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plants/imports/{id}/apply',
        tags,
        operationId: 'applyPlantImport',
        summary: 'Apply an import, in the background',
        description: `Starts applying the previewed rows (or goes on with a stopped or interrupted apply from the first row not applied), and answers at once; poll getPlantImport for progress. Each row is decided again against the plant as it is when its slice runs: new ids are created (yours), plants you may change are renamed or re-tagged, the rest left as they are. Applying the same file again creates nothing twice. The rows are charged to this token as the apply goes (one unit per ${IMPORT_APPLY_ROWS_PER_UNIT} rows), the apply waiting for the units when the bucket is short. One import of yours applies at a time. Takes no body.`,
        successDescription: 'The import, applying (or done)',
      },
      mcp: {
        description:
          'Apply a previewed import in the background: creates the new plants, renames or re-tags yours, leaves the rest; applying it again creates nothing twice. Answers at once; call plants_imports_get for progress, plants_imports_stop to stop.',
      },
    })
    .input(importIdParam)
    .output(importSchema)
    .declare({ cost: FIXED_COSTS.applyImport, errors: { ...oneImport, importState: true, invalidCsv: true } })
    .mutation(({ ctx, input }) => {
      const tokenId = ctx.auth.status === 'signedIn' ? ctx.auth.tokenId : 0;
      return applyImport(ctx.actor, tokenId, input.id, { takeUnits: takeUnitsOf(ctx), units: applyUnits }, reportApplyError);
    }),

  stop: protectedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plants/imports/{id}/stop',
        tags,
        operationId: 'stopPlantImport',
        summary: 'Stop an apply',
        description:
          'Stops the apply after the slice being written, if any (a slice is written whole or not at all): the answer counts every row applied, and nothing more is written. Apply again to go on from there. Takes no body.',
        successDescription: 'The import, stopped (or as it was, when it was not applying)',
      },
    })
    .input(importIdParam)
    .output(importSchema)
    .declare({ cost: FIXED_COSTS.stepImport, errors: oneImport })
    .mutation(({ ctx, input }) => stopImport(ctx.actor, input.id)),
});
