import { z } from 'zod';

import { BODY_LIMIT_BYTES, IMPORT_RECORD_MAX_LENGTH } from './limits';
import { PLANT_FIELD_NAMES } from './plants';
import { pageLimit } from './query-values';

/**
 * The CSV import's shapes (docs/api.md, "CSV import"): shared by its procedures (validation, the OpenAPI
 * document, the MCP tools) and the admin page's import dialog.
 *
 * An import goes: `receiving` (parts arrive, each row checked as it comes) → `ready` (the upload ended: the
 * preview is whole) → `applying` (in the background, a slice of rows at a time) → `done`; or `stopped` (Stop, or
 * the token that asked for it revoked; an apply goes on from there), or `refused` (the file as a whole cannot be
 * read: `problem` says why).
 */
export const IMPORT_STATES = ['receiving', 'ready', 'applying', 'stopped', 'done', 'refused'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

/** What the preview plans for a row: what the apply will do with it if nothing changes meanwhile. */
export const IMPORT_PLANS = ['create', 'change', 'unchanged', 'refused'] as const;
export type ImportPlan = (typeof IMPORT_PLANS)[number];
/** What the apply did with a row. */
export const IMPORT_OUTCOMES = ['created', 'changed', 'unchanged', 'refused'] as const;
export type ImportOutcome = (typeof IMPORT_OUTCOMES)[number];

/**
 * The columns a file may have: the id and the plant's declared fields (the export's `id,name,tag`), and the
 * columns an admin's export adds, which are read and left aside (an import never changes who owns a plant or
 * when it was made).
 */
export const IMPORT_IGNORED_COLUMNS = ['owner', 'created'] as const;
export const IMPORT_COLUMNS = ['id', ...PLANT_FIELD_NAMES, ...IMPORT_IGNORED_COLUMNS] as const;

/** The parts of one file: an upload of IMPORT_MAX_BYTES in parts of a few KiB stays within this. */
export const IMPORT_PARTS_MAX = 100_000;
export const IMPORT_ROWS_PAGE_MAX = 100;
export const IMPORT_ROWS_PAGE_DEFAULT = 50;
const INT32_MAX = 2 ** 31 - 1;
const ISO_TIME_MAX_LENGTH = 30;
const int32 = (min: number, max = INT32_MAX) => z.int().min(min).max(max).meta({ format: 'int32' });
const isoTime = z.string().max(ISO_TIME_MAX_LENGTH).meta({ format: 'date-time' });

/** A whole number in the path or the query: decimal digits from REST, a number from the tRPC door and MCP. */
const wholeFromText = (field: string, min: number, max: number, description: string) =>
  (
    z.preprocess(
      (value) => (typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value),
      z
        .int({ error: `${field} must be an integer from ${min} to ${max}` })
        .min(min, { error: `${field} must be an integer from ${min} to ${max}` })
        .max(max, { error: `${field} must be an integer from ${min} to ${max}` }),
    ) as unknown as z.ZodType<number, number | string>
  ).meta({ description, override: { type: 'integer', format: 'int32', minimum: min, maximum: max } });

const importId = wholeFromText('id', 1, INT32_MAX, 'The id of the import');

export const importIdParam = z.object({ id: importId });

/** One part of the file: its text (REST: the request body, `text/csv`). */
export const importPartInput = z.object({
  id: importId,
  part: wholeFromText('part', 1, IMPORT_PARTS_MAX, 'The number of this part: 1 for the first, each next one 1 more. Sending a part again with the same text is harmless.'),
  csv: z
    .string({ error: 'csv must be text' })
    .max(BODY_LIMIT_BYTES, { error: `a part is at most ${BODY_LIMIT_BYTES} characters` })
    .meta({ description: 'The text of this part of the file: cut anywhere between characters (a record may continue in the next part)' }),
});

export const importRowsInput = z.object({
  id: importId,
  plan: z
    .enum(IMPORT_PLANS, { error: `plan is ${IMPORT_PLANS.join(', ')}` })
    .optional()
    .meta({ description: 'Only rows the preview planned this way (refused: the rows that will not be applied, with why)' }),
  after: wholeFromText('after', 0, INT32_MAX, 'Only rows on a later line than this (the last line of the previous page)').optional(),
  limit: pageLimit(IMPORT_ROWS_PAGE_MAX, IMPORT_ROWS_PAGE_DEFAULT, 'The most rows to return, by line.'),
});

const count = (description: string) => int32(0).meta({ description });

export const importSchema = z
  .object({
    id: int32(1),
    state: z.enum(IMPORT_STATES).meta({
      description:
        'receiving: parts arrive; ready: the upload ended and the preview is whole; applying: rows are being applied in the background; done; stopped: by Stop, or because the token that asked for the apply was revoked (apply again to go on); refused: the file cannot be read (problem says why)',
    }),
    problem: z.string().max(500).nullable().meta({ description: 'Why the file was refused, or why the apply stopped by itself; null otherwise' }),
    interrupted: z.boolean().meta({ description: 'Applying, but the server applying it stopped (a restart): apply again to go on from where it got to' }),
    parts: count('Parts received'),
    bytes: count('Bytes of text received'),
    rows: count('Rows read so far (lines with data)'),
    preview: z
      .object({
        create: count('New plants the apply will create (ids no plant has)'),
        change: count('Plants of yours the apply will rename or re-tag'),
        unchanged: count('Rows that say what the plant already is: nothing to do'),
        refused: count('Rows that will not be applied: each has its reason (listImportRows with plan=refused)'),
      })
      .meta({ description: 'What applying would do, as the store was when each part arrived' }),
    applied: z
      .object({
        rows: count('Rows applied so far (of preview.create + preview.change + preview.unchanged)'),
        created: count('Plants created'),
        changed: count('Plants renamed or re-tagged'),
        unchanged: count('Rows whose plant already was as the row says'),
        refused: count('Rows refused when applied: the id was taken or the plant deleted since the preview'),
      })
      .meta({ description: 'What the apply has done so far' }),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .meta({ id: 'PlantImport', description: 'A CSV import of plants: its upload, its preview and its apply' });

export type PlantImport = z.infer<typeof importSchema>;

/** A row's cells by column, as the file gave them (quotes undone; an empty cell is ""). */
const cellsSchema = z
  .object(Object.fromEntries(['id', ...PLANT_FIELD_NAMES].map((column) => [column, z.string().max(IMPORT_RECORD_MAX_LENGTH).optional()])))
  .meta({ description: "The row's cells by column (id and the plant's fields), as the file gave them; a column the file lacks is left out" });

export const importRowSchema = z
  .object({
    line: int32(1).meta({ description: 'The line of the file the row starts on' }),
    id: z
      .bigint()
      .meta({ override: { type: 'integer', format: 'int64' } })
      .nullable()
      .meta({ description: 'The plant id, exact; null when the id cell is not an int64' }),
    cells: cellsSchema,
    plan: z.enum(IMPORT_PLANS),
    outcome: z.enum(IMPORT_OUTCOMES).nullable().meta({ description: 'What the apply did; null until it got to this row' }),
    error: int32(40000, 59999).nullable().meta({ description: 'Why the row is refused: the error value a create or a patch of it answers (docs/api.md, Errors)' }),
    message: z.string().max(1_000).nullable().meta({ description: 'Why the row is refused, in words' }),
  })
  .meta({ id: 'PlantImportRow', description: 'One row of an import: what the preview plans, and what the apply did' });

export type PlantImportRow = z.infer<typeof importRowSchema>;
