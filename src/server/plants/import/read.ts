import 'server-only';

import { problemFromIssue } from '@/server/problems';
import { CSV_BOM, readCsvRecords, readCsvText } from '@/shared/csv';
import type { ErrorKind } from '@/shared/errors';
import { IMPORT_RECORD_MAX_LENGTH } from '@/shared/limits';
import { IMPORT_COLUMNS } from '@/shared/plant-import';
import { INT64_MAX, INT64_MIN, isOptionalPlantField, newPlantSchema, PLANT_FIELD_NAMES, type PlantFieldName, type PlantPatch } from '@/shared/plants';

/**
 * A part of an import's file as rows, each checked by the rules a create checks (shared/plants.ts), with the
 * create's error kinds and words. Pure: what is kept between parts (the columns, the unfinished record, the
 * line) comes in and goes out, so any process can read the next part.
 */
export type ReadingState = {
  /** The columns the file's first line named; null until it is read. */
  columns: readonly string[] | null;
  /** The unfinished record the previous part ended in. */
  tail: string;
  /** The line `tail` starts on. */
  nextLine: number;
  /** Whether this is the file's first part (a byte order mark may start it). */
  first: boolean;
};

/** What a row asks of a plant's fields, as a patch says it: a value, null (an empty optional cell: none), or nothing. */
export type RowFields = PlantPatch;

export type CheckedRow = {
  line: number;
  /** The id, exact, when the cell is an int64 in digits (one past the range is refused, and kept as its text only). */
  id: bigint | null;
  /** The cells as the file gave them, by column (id and the declared fields the file has). */
  cells: Record<string, string>;
  /** Set when the row passes a create's checks. */
  fields?: RowFields;
  /** Set when it does not: the error a create of it answers, or why the row cannot be read. */
  refusal?: { kind: ErrorKind; message: string };
};

export type PartRead =
  | { ok: true; columns: readonly string[] | null; rows: CheckedRow[]; tail: string; nextLine: number }
  /** The file cannot be read (`problem`), or this part has more than `maxRows` rows (`tooManyRows`: the rest is not checked). */
  | { ok: false; problem: string; tooManyRows?: true };

const REQUIRED = ['id', ...PLANT_FIELD_NAMES.filter((field) => !isOptionalPlantField(field))];
const KNOWN = new Set<string>(IMPORT_COLUMNS);
const KEPT = new Set<string>(['id', ...PLANT_FIELD_NAMES]);
const shown = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * What a row's cells ask of the plant's fields: the text (without the apostrophe the export puts before a
 * formula character), null for an empty optional cell (no tag), nothing for an empty required one or a column
 * the file lacks.
 */
export function rowFields(cells: Record<string, string>): RowFields {
  const fields: Partial<Record<PlantFieldName, string | null>> = {};
  for (const field of PLANT_FIELD_NAMES) {
    const cell = cells[field];
    if (cell === undefined) continue;
    const text = readCsvText(cell);
    if (text !== '') fields[field] = text;
    else if (isOptionalPlantField(field)) fields[field] = null;
  }
  return fields as RowFields;
}

/** The file's first line: the columns, named as the export names them (any case, spaces around ignored). */
function readHeader(fields: string[]): { columns: string[] } | { problem: string } {
  const columns = fields.map((field) => field.trim().toLowerCase());
  const unknown = columns.find((column) => !KNOWN.has(column));
  const expected = `the first line must name the columns: ${IMPORT_COLUMNS.join(',')} (any of ${IMPORT_COLUMNS.slice(REQUIRED.length).join(', ')} may be left out; owner and created are read and left aside)`;
  if (unknown !== undefined) return { problem: `${expected}; it names ${shown(unknown)}` };
  const twice = columns.find((column, index) => columns.indexOf(column) !== index);
  if (twice !== undefined) return { problem: `the first line names the column ${shown(twice)} twice` };
  const missing = REQUIRED.find((column) => !columns.includes(column));
  if (missing !== undefined) return { problem: `${expected}; it lacks ${missing}` };
  return { columns };
}

/**
 * What is kept of a refused row's cell, to show it: its first characters. A valid row's cells are within the
 * fields' own limits; a refused one's may be a record's whole 4,096 characters, which the file would then be
 * kept as, several times over once its control characters are escaped.
 */
const REFUSED_CELL_KEPT = 100;

const shortened = (cells: Record<string, string>) =>
  Object.fromEntries(Object.entries(cells).map(([column, cell]) => [column, cell.length > REFUSED_CELL_KEPT ? `${cell.slice(0, REFUSED_CELL_KEPT)}…` : cell]));

/** One record as a checked row (undefined for a record of empty cells only: not a row). */
function readRow(line: number, fields: string[], columns: readonly string[], problem: string | undefined): CheckedRow | undefined {
  if (problem === undefined && fields.every((field) => field === '')) return undefined;
  // The id and the plant's fields; owner and created are left aside. A cell a short record lacks is empty.
  const cells: Record<string, string> = {};
  columns.forEach((column, index) => {
    if (KEPT.has(column)) cells[column] = fields[index] ?? '';
  });
  const idCell = cells.id ?? '';
  const digits = /^-?\d+$/.test(idCell) ? BigInt(idCell) : null;
  const id = digits !== null && digits >= INT64_MIN && digits <= INT64_MAX ? digits : null;
  const refused = (kind: ErrorKind, message: string): CheckedRow => ({ line, id, cells: shortened(cells), refusal: { kind, message } });
  if (problem !== undefined) return refused('invalidCsv', `line ${line}: ${problem}`);
  if (fields.length > columns.length) return refused('invalidCsv', `line ${line} has ${fields.length} fields; the first line names ${columns.length} columns`);
  // As a create reads a body: an id in digits is an integer, anything else is text where one is needed; an empty
  // cell is an absent field.
  const fieldsGiven = rowFields(cells);
  const candidate: Record<string, unknown> = { id: idCell === '' ? undefined : (digits ?? idCell) };
  for (const field of PLANT_FIELD_NAMES) if (fieldsGiven[field] !== null && fieldsGiven[field] !== undefined) candidate[field] = fieldsGiven[field];
  const checked = newPlantSchema.safeParse(candidate);
  if (!checked.success) {
    const { kind, message } = problemFromIssue(checked.error.issues[0]!, candidate);
    return refused(kind, message);
  }
  return { line, id, cells, fields: fieldsGiven };
}

/**
 * Reads one part: the previous part's unfinished record and this part's text, up to the last whole record
 * (with `final`, to the end). The first record of the file names the columns; a file whose first line does
 * not, or whose records cannot be told apart (one longer than IMPORT_RECORD_MAX_LENGTH), is refused whole.
 */
export function readPart(state: ReadingState, text: string, final: boolean, maxRows = Infinity): PartRead {
  const body = state.first && text.startsWith(CSV_BOM) ? text.slice(CSV_BOM.length) : text;
  const read = readCsvRecords(state.tail + body, { firstLine: state.nextLine, final, maxRecordLength: IMPORT_RECORD_MAX_LENGTH });
  if (!read.ok) return { ok: false, problem: read.problem };
  let columns = state.columns;
  const rows: CheckedRow[] = [];
  for (const record of read.records) {
    if (columns === null) {
      if (record.problem !== undefined) return { ok: false, problem: `the first line cannot be read: ${record.problem}` };
      const header = readHeader(record.fields);
      if ('problem' in header) return { ok: false, problem: header.problem };
      columns = header.columns;
      continue;
    }
    const row = readRow(record.line, record.fields, columns, record.problem);
    if (row) rows.push(row);
    if (rows.length > maxRows) return { ok: false, problem: `more than ${maxRows.toLocaleString('en-US')} rows`, tooManyRows: true };
  }
  if (final && columns === null) return { ok: false, problem: 'the file is empty: its first line must name the columns (id,name,tag)' };
  return { ok: true, columns, rows, tail: read.rest, nextLine: read.restLine };
}
