import 'server-only';

import { createHash } from 'node:crypto';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { AppError, errorCatalog } from '@/shared/errors';
import { IMPORT_KEPT_MS, IMPORT_MAX_BYTES, IMPORT_MAX_ROWS, IMPORT_PART_MAX_ROWS, IMPORTS_KEPT_PER_USER } from '@/shared/limits';
import { IMPORT_ROWS_PAGE_DEFAULT, type ImportOutcome, type ImportPlan, type ImportState, type PlantImport, type PlantImportRow } from '@/shared/plant-import';
import { PLANT_FIELD_NAMES, type StoredFields } from '@/shared/plants';

import { inPlantScope } from '../scope';
import { idTakenMessage } from '../service';
import { type CheckedRow, type PartRead, readPart, type RowFields } from './read';

/**
 * The imports' rows in the database (PlantImport, PlantImportRow): an import is started, its file arrives part
 * after part, each part's rows checked and planned against the store as it is then (the preview), until the
 * upload ends. The apply is apply.ts. An import is its starter's alone: anyone else asking for it (an admin
 * included) finds none, exactly as when it does not exist.
 */

export type ImportRecord = Prisma.PlantImportGetPayload<object>;

const nowMs = () => BigInt(Date.now());
/** Imports untouched since this are gone (the sweep removes their rows). */
const keptSince = () => nowMs() - BigInt(IMPORT_KEPT_MS);

const notFound = (id: number) => new AppError('importNotFound', `no import with id ${id}`, 'id');

/** The caller's import, or "not found" (another user's, one swept or let go, one that never was). */
export async function ownImport(actor: Actor, id: number): Promise<ImportRecord> {
  const found = await db.plantImport.findFirst({ where: { id, userId: actor.userId, updatedAtMs: { gte: keptSince() } } });
  if (!found) throw notFound(id);
  return found;
}

const isoTime = (ms: bigint) => new Date(Number(ms)).toISOString();

/** Whether the process applying the import has stopped renewing its claim (it crashed, or was restarted). */
export const isInterrupted = (row: Pick<ImportRecord, 'state' | 'runnerUntilMs'>, at = nowMs()) => row.state === 'applying' && (row.runnerUntilMs ?? 0n) < at;

export function importView(row: ImportRecord): PlantImport {
  return {
    id: row.id,
    state: row.state as ImportState,
    problem: row.problem,
    interrupted: isInterrupted(row),
    parts: row.parts,
    bytes: row.bytes,
    rows: row.rows,
    preview: { create: row.toCreate, change: row.toChange, unchanged: row.unchanged, refused: row.refused },
    applied: { rows: row.created + row.changed + row.leftAsIs + row.failed, created: row.created, changed: row.changed, unchanged: row.leftAsIs, refused: row.failed },
    createdAt: isoTime(row.createdAtMs),
    updatedAt: isoTime(row.updatedAtMs),
  };
}

/**
 * A new import, empty, receiving its first part. A user keeps IMPORTS_KEPT_PER_USER: starting one more lets go
 * of their oldest that is not being applied (its rows are swept in the background, sweep.ts), so an abandoned
 * upload never blocks a new one, and what one user holds stays bounded.
 */
export async function startImport(actor: Actor): Promise<PlantImport> {
  const at = nowMs();
  const older = await db.plantImport.findMany({
    where: { userId: actor.userId, updatedAtMs: { gte: keptSince() } },
    orderBy: { id: 'desc' },
    skip: IMPORTS_KEPT_PER_USER - 1,
    select: { id: true, state: true, runnerUntilMs: true },
  });
  const letGo = older.filter((row) => !(row.state === 'applying' && !isInterrupted(row, at))).map((row) => row.id);
  if (letGo.length > 0) await db.plantImport.updateMany({ where: { id: { in: letGo } }, data: { updatedAtMs: 0n } });
  return importView(await db.plantImport.create({ data: { userId: actor.userId, createdAtMs: at, updatedAtMs: at } }));
}

export async function listImports(actor: Actor): Promise<PlantImport[]> {
  const rows = await db.plantImport.findMany({ where: { userId: actor.userId, updatedAtMs: { gte: keptSince() } }, orderBy: { id: 'desc' }, take: IMPORTS_KEPT_PER_USER });
  return rows.map(importView);
}

/** What a row holds as a plan: the checks' refusal, or what the store as it is makes of it. */
export type PlannedRow = CheckedRow & { plan: ImportPlan };

/** The plants with these ids, whoever owns them: the id and owner, and the declared fields as stored. */
export async function plantsWithIds(client: Prisma.TransactionClient, ids: bigint[]): Promise<Map<string, { ownerId: number } & StoredFields>> {
  const found = new Map<string, { ownerId: number } & StoredFields>();
  const columns = Prisma.raw(PLANT_FIELD_NAMES.map((field) => `p."${field}"`).join(', '));
  for (let start = 0; start < ids.length; start += ID_CHUNK) {
    // plant scope: which ids are taken in the whole store (as a create finds); the caller may change only those inPlantScope allows.
    const rows = await client.$queryRaw<({ id: bigint; ownerId: number } & StoredFields)[]>`SELECT p.id, p."ownerId", ${columns} FROM "Plant" p WHERE p.id IN (${Prisma.join(ids.slice(start, start + ID_CHUNK))})`;
    for (const row of rows) found.set(String(row.id), { ...row, ownerId: Number(row.ownerId) });
  }
  return found;
}

/** Ids per statement: far below either engine's limit on parameters. */
const ID_CHUNK = 500;

/** Whether a row says what the plant already is: each field it gives equals the stored one (null: none). */
export function sameAsStored(fields: RowFields, stored: StoredFields): boolean {
  return PLANT_FIELD_NAMES.every((field) => fields[field] === undefined || fields[field] === stored[field]);
}

/**
 * Decides what applying each row would do now: create (an id no plant has), change (a plant the caller may
 * change, as a PATCH may: a member's own, any for an admin) or leave it (the plant is already so); refused:
 * the rows the checks refused, an id another row of the file has already (the first keeps it), and an id of a
 * plant the caller may not change, with the create's own answer (40006, "a plant with id … already exists"):
 * nothing tells whose it is.
 */
async function plan(actor: Actor, importId: number, rows: CheckedRow[]): Promise<PlannedRow[]> {
  const ids = [...new Set(rows.filter((row) => row.fields !== undefined).map((row) => row.id!))];
  const earlier = new Map<string, number>();
  for (let start = 0; start < ids.length; start += ID_CHUNK) {
    const found = await db.$queryRaw<{ plantId: bigint; line: number }[]>`
      SELECT "plantId", MIN("line") AS "line" FROM "PlantImportRow"
      WHERE "importId" = ${importId} AND "plantId" IN (${Prisma.join(ids.slice(start, start + ID_CHUNK))}) GROUP BY "plantId"`;
    for (const row of found) earlier.set(String(row.plantId), Number(row.line));
  }
  const plants = await plantsWithIds(db, ids);
  return rows.map((row): PlannedRow => {
    if (row.fields === undefined) return { ...row, plan: 'refused' };
    const key = String(row.id);
    const firstLine = earlier.get(key);
    if (firstLine !== undefined) {
      return { ...row, plan: 'refused', refusal: { kind: 'plantIdTaken', message: `a plant with id ${row.id} is on line ${firstLine} of this file already` } };
    }
    earlier.set(key, row.line);
    const stored = plants.get(key);
    if (stored === undefined) return { ...row, plan: 'create' };
    if (!inPlantScope(actor, stored.ownerId)) return { ...row, plan: 'refused', refusal: { kind: 'plantIdTaken', message: idTakenMessage(row.id!) } };
    return { ...row, plan: sameAsStored(row.fields, stored) ? 'unchanged' : 'change' };
  });
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('base64url');

/** Rows per INSERT: 7 values each, far below either engine's limit on parameters. */
const ROW_CHUNK = 500;

/** The file cannot be read as a whole: the import is refused (for good), and the call says why. */
async function refuseFile(row: ImportRecord, problem: string): Promise<never> {
  await db.plantImport.updateMany({ where: { id: row.id, state: 'receiving', parts: row.parts }, data: { state: 'refused', problem, tail: '', updatedAtMs: nowMs() } });
  throw new AppError('invalidCsv', problem);
}

/** The import still receiving, or why not. */
function stillReceiving(row: ImportRecord): void {
  if (row.state === 'refused') throw new AppError('invalidCsv', row.problem ?? 'the file was refused');
  if (row.state !== 'receiving') throw new AppError('importState', `the upload of import ${row.id} has ended: it takes no more parts`);
}

/**
 * Keeps a part's rows and what the preview makes of them, with the import's counts and what the next part
 * needs (the unfinished record, the line), in one transaction that holds only if no other part was taken
 * meanwhile (a part sent twice at once is kept once).
 */
async function keep(row: ImportRecord, part: { number: number; hash: string | null; bytes: number; final: boolean }, read: Extract<PartRead, { ok: true }>, planned: PlannedRow[]): Promise<boolean> {
  const count = (plan: ImportPlan) => planned.filter((one) => one.plan === plan).length;
  return db.$transaction(async (tx) => {
    const claimed = await tx.plantImport.updateMany({
      where: { id: row.id, state: 'receiving', parts: row.parts },
      data: {
        parts: part.number,
        lastPartHash: part.hash ?? row.lastPartHash,
        columns: read.columns?.join(',') ?? null,
        tail: read.tail,
        nextLine: read.nextLine,
        bytes: { increment: part.bytes },
        rows: { increment: planned.length },
        toCreate: { increment: count('create') },
        toChange: { increment: count('change') },
        unchanged: { increment: count('unchanged') },
        refused: { increment: count('refused') },
        updatedAtMs: nowMs(),
        ...(part.final ? { state: 'ready' } : {}),
      },
    });
    if (claimed.count === 0) return false;
    for (let start = 0; start < planned.length; start += ROW_CHUNK) {
      const values = planned.slice(start, start + ROW_CHUNK).map(
        (one) =>
          Prisma.sql`(${row.id}, ${one.line}, ${one.id}, ${JSON.stringify(one.cells)}, ${one.plan}, ${one.refusal ? errorCatalog[one.refusal.kind].value : null}, ${one.refusal?.message ?? null})`,
      );
      await tx.$executeRaw`INSERT INTO "PlantImportRow" ("importId", "line", "plantId", "cells", "plan", "error", "message") VALUES ${Prisma.join(values)}`;
    }
    return true;
  });
}

/**
 * One part of the file (1, 2, 3, … in order). A part sent again with the same text (a retry whose answer was
 * lost) is answered with the import as it is, and read once. `charge` takes the part's rows from the caller's
 * bucket once they are read and before they are looked up and kept.
 */
export async function receivePart(actor: Actor, input: { id: number; part: number; csv: string }, charge: (rows: number) => Promise<void>): Promise<PlantImport> {
  const row = await ownImport(actor, input.id);
  const hash = hashOf(input.csv);
  if (input.part === row.parts && hash === row.lastPartHash) return importView(row);
  stillReceiving(row);
  if (input.part !== row.parts + 1) throw new AppError('importState', `part ${row.parts + 1} comes next, not part ${input.part}`, 'part');
  const bytes = Buffer.byteLength(input.csv);
  if (row.bytes + bytes > IMPORT_MAX_BYTES) await refuseFile(row, `the file is larger than ${IMPORT_MAX_BYTES / 1024 / 1024} MiB: import it in several files`);
  const read = readPart({ columns: row.columns?.split(',') ?? null, tail: row.tail, nextLine: row.nextLine, first: row.parts === 0 }, input.csv, false, IMPORT_PART_MAX_ROWS);
  // A part too large is refused alone, and nothing of it kept: the same text cut in two is taken.
  if (!read.ok && read.tooManyRows) throw new AppError('invalidCsv', `part ${input.part} holds ${read.problem}; a part holds at most ${IMPORT_PART_MAX_ROWS.toLocaleString('en-US')}: send it in smaller parts`, 'csv');
  if (!read.ok) return refuseFile(row, read.problem);
  if (row.rows + read.rows.length > IMPORT_MAX_ROWS) await refuseFile(row, `the file has more than ${IMPORT_MAX_ROWS.toLocaleString('en-US')} rows: import it in several files`);
  await charge(read.rows.length);
  const planned = await plan(actor, row.id, read.rows);
  if (await keep(row, { number: input.part, hash, bytes, final: false }, read, planned)) return importView(await ownImport(actor, row.id));
  // Another request took a part meanwhile: this same part (then this is its answer), or not.
  const now = await ownImport(actor, row.id);
  if (now.parts === input.part && now.lastPartHash === hash) return importView(now);
  throw new AppError('importState', `part ${now.parts + 1} comes next, not part ${input.part}`, 'part');
}

/**
 * The upload has ended: the last record is read (a quote never closed refuses its row), and the preview is
 * whole (`ready`). Asked again, it answers the import as it is.
 */
export async function endUpload(actor: Actor, id: number): Promise<PlantImport> {
  const row = await ownImport(actor, id);
  if (row.state !== 'receiving') {
    if (row.state === 'refused') stillReceiving(row);
    return importView(row);
  }
  const read = readPart({ columns: row.columns?.split(',') ?? null, tail: row.tail, nextLine: row.nextLine, first: row.parts === 0 }, '', true);
  if (!read.ok) return refuseFile(row, read.problem);
  if (row.rows + read.rows.length > IMPORT_MAX_ROWS) await refuseFile(row, `the file has more than ${IMPORT_MAX_ROWS.toLocaleString('en-US')} rows: import it in several files`);
  const planned = await plan(actor, row.id, read.rows);
  if (!(await keep(row, { number: row.parts, hash: null, bytes: 0, final: true }, read, planned))) return importView(await ownImport(actor, id));
  return importView(await ownImport(actor, id));
}

export async function getImport(actor: Actor, id: number): Promise<PlantImport> {
  return importView(await ownImport(actor, id));
}

type RowRecord = { line: number; plantId: bigint | null; cells: string; plan: string; outcome: string | null; error: number | null; message: string | null };

function rowView(row: RowRecord): PlantImportRow {
  return {
    line: Number(row.line),
    id: row.plantId === null ? null : BigInt(row.plantId),
    cells: JSON.parse(row.cells) as Record<string, string>,
    plan: row.plan as ImportPlan,
    outcome: row.outcome as ImportOutcome | null,
    error: row.error === null ? null : Number(row.error),
    message: row.message,
  };
}

/** A page of an import's rows by line, all or those of one plan; `nextAfter` is the last line when more follow. */
export async function importRows(
  actor: Actor,
  input: { id: number; plan?: ImportPlan; after?: number; limit?: number },
): Promise<{ rows: PlantImportRow[]; nextAfter: number | null }> {
  const row = await ownImport(actor, input.id);
  const limit = input.limit ?? IMPORT_ROWS_PAGE_DEFAULT;
  const found = await db.plantImportRow.findMany({
    where: { importId: row.id, line: { gt: input.after ?? 0 }, ...(input.plan === undefined ? {} : { plan: input.plan }) },
    orderBy: { line: 'asc' },
    take: limit + 1,
    select: { line: true, plantId: true, cells: true, plan: true, outcome: true, error: true, message: true },
  });
  const rows = found.slice(0, limit).map(rowView);
  return { rows, nextAfter: found.length > limit ? rows[rows.length - 1]!.line : null };
}
