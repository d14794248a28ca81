import 'server-only';

import { randomUUID } from 'node:crypto';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { runInSlices, type SliceResult, sliceSizer } from '@/server/background/slices';
import { db } from '@/server/db/client';
import { backgroundSliceDuration, backgroundUnitsDone } from '@/server/observability/metrics';
import { AppError, errorCatalog, type ErrorKind } from '@/shared/errors';
import type { ImportOutcome, PlantImport } from '@/shared/plant-import';
import { type NewPlant, PLANT_FIELD_NAMES } from '@/shared/plants';

import { plantsCommitted } from '../events';
import { whereOf } from '../conditions';
import { inPlantScope, plantScopeSql } from '../scope';
import { idTakenMessage, INSERTED_COLUMNS, insertedValues, patchedColumns } from '../service';
import { type RowFields, rowFields } from './read';
import { importView, isInterrupted, ownImport, plantsWithIds, sameAsStored } from './store';

/**
 * The apply: an import's rows written in the background, a slice at a time (background/slices.ts: each slice
 * one transaction, sized to ~10 ms of the process's time, with as long again for everything else between
 * two), each slice's rows charged first to the bucket of the token that asked for the apply (`TakeUnits`, as
 * the export waits for its batches' units), until every row is applied or someone says Stop.
 *
 * Idempotent by construction: each slice decides what to do with its rows from the plants as they are at that
 * moment, in its own transaction (a row whose plant is already so is left as it is; a create is an INSERT that
 * does nothing where the id exists), and moves `appliedThrough` past them in the same commit. So a slice is
 * applied whole or not at all; an apply that stops (Stop, the token revoked, a crash, a restart) goes on from
 * the first row not applied; and applying a file again creates nothing twice.
 *
 * Stop is exact: a slice's first statement claims the import (still applying, still this job's), so a Stop
 * committed before it ends the job with nothing more written, and one that comes during it waits for its commit
 * (the import's row is held) and answers with that slice counted.
 */

/** Takes units from the apply's bucket: undefined when taken, else how long to wait for them. */
export type TakeUnits = (units: number) => Promise<{ retryAfterMs: number } | undefined>;

/** How long a job's claim on an import holds without being renewed: past it, the import reads "interrupted". */
const CLAIM_MS = 30_000;
/** While waiting for units, a job renews its claim this often (a wait may be longer than the claim). */
const RENEW_MS = 10_000;
/** Rows per slice: the sizer's first size and its bound (a statement's parameters, a transaction's length). */
const SLICE_SIZES = { initial: 32, max: 512 };
/**
 * The fewest rows a slice takes, whatever the sizer says: a slice's statements cost ~4 ms of CPU whatever it
 * holds (on PostgreSQL more, its round trips included), so a smaller slice saves nothing and only lasts longer.
 */
const SLICE_MIN_ROWS = 16;
/** How often a job asks again whether its token still works (the doors' token cache holds an answer 5 s). */
const TOKEN_CHECK_MS = 1_000;

type Job = {
  importId: number;
  runner: string;
  takeUnits: TakeUnits;
  units: (rows: number) => number;
  /** Rows paid for so far: each slice pays the units its rows add to the whole (no rounding up per slice). */
  rowsPaid: number;
  /** Who the apply acts for, as last read from its token, and when. */
  actor?: { actor: Actor; readAt: number };
  stopped: boolean;
  wake: () => void;
  finished: Promise<void>;
};

/** The jobs this process runs, by import. */
const jobs = new Map<number, Job>();

const nowMs = () => BigInt(Date.now());

/**
 * The import's claim renewed, while it is still applying and this job's: false when it is not (stopped, taken
 * over after the claim lapsed, swept).
 */
async function renewClaim(client: Prisma.TransactionClient, job: Job): Promise<boolean> {
  const at = nowMs();
  const { count } = await client.plantImport.updateMany({
    where: { id: job.importId, state: 'applying', runner: job.runner },
    data: { runnerUntilMs: at + BigInt(CLAIM_MS), updatedAtMs: at },
  });
  return count > 0;
}

/** Who the apply acts for now: the token's user as they are (a demoted admin changes a member's plants only), while the token works. */
async function actorOfToken(client: Prisma.TransactionClient, tokenId: number | null): Promise<Actor | undefined> {
  if (tokenId === null) return undefined;
  const token = await client.apiToken.findFirst({
    where: { id: tokenId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] },
    select: { user: { select: { id: true, name: true, role: true } } },
  });
  return token ? { userId: token.user.id, name: token.user.name, role: token.user.role } : undefined;
}

type SliceOutcome = { rows: number; more: boolean; created: number; changed: number } | { ended: 'stopped' | 'tokenGone' };

type Decided = { line: number; outcome: ImportOutcome; refusal?: { kind: ErrorKind; message: string } };

type RowToApply = { line: number; id: bigint; fields: RowFields };

/**
 * One slice, one transaction, a handful of statements whatever its size: claim the import, read the next
 * `size` rows not refused by the preview, decide each against its plant as it is now, write the creates (one
 * INSERT) and the changes (one UPDATE, the access rule in its WHERE, as a PATCH's), and record what became of
 * each row and how far the apply got.
 */
async function applySlice(job: Job, size: number): Promise<SliceOutcome> {
  return db.$transaction(async (tx) => {
    const at = nowMs();
    // The claim first: a Stop committed before it ends the job here; one that comes later waits for this commit.
    const [state] = await tx.$queryRaw<{ userId: number; tokenId: number | null; appliedThrough: number }[]>`
      UPDATE "PlantImport" SET "runnerUntilMs" = ${at + BigInt(CLAIM_MS)}, "updatedAtMs" = ${at}
      WHERE "id" = ${job.importId} AND "state" = 'applying' AND "runner" = ${job.runner}
      RETURNING "userId", "tokenId", "appliedThrough"`;
    if (!state) return { ended: 'stopped' };
    if (job.actor === undefined || Date.now() - job.actor.readAt >= TOKEN_CHECK_MS) {
      const actor = await actorOfToken(tx, state.tokenId === null ? null : Number(state.tokenId));
      if (!actor) return { ended: 'tokenGone' };
      job.actor = { actor, readAt: Date.now() };
    }
    const { actor } = job.actor;
    // One row more than the slice takes: whether any is left after it.
    const next = await tx.$queryRaw<{ line: number; plantId: bigint; cells: string }[]>`
      SELECT "line", "plantId", "cells" FROM "PlantImportRow"
      WHERE "importId" = ${job.importId} AND "line" > ${state.appliedThrough} AND "plan" <> 'refused'
      ORDER BY "line" LIMIT ${size + 1}`;
    const rows: RowToApply[] = next
      .slice(0, size)
      .map((row) => ({ line: Number(row.line), id: BigInt(row.plantId), fields: rowFields(JSON.parse(row.cells) as Record<string, string>) }));
    const plants = await plantsWithIds(tx, rows.map((row) => row.id));
    const decided: Decided[] = [];
    const creates: RowToApply[] = [];
    const changes: RowToApply[] = [];
    for (const row of rows) {
      const stored = plants.get(String(row.id));
      if (stored === undefined) creates.push(row);
      else if (!inPlantScope(actor, stored.ownerId)) decided.push({ line: row.line, outcome: 'refused', refusal: { kind: 'plantIdTaken', message: idTakenMessage(row.id) } });
      else if (sameAsStored(row.fields, stored)) decided.push({ line: row.line, outcome: 'unchanged' });
      else changes.push(row);
    }
    const created = await createPlants(tx, Number(state.userId), creates);
    for (const row of creates) {
      decided.push(created.has(String(row.id)) ? { line: row.line, outcome: 'created' } : { line: row.line, outcome: 'refused', refusal: { kind: 'plantIdTaken', message: idTakenMessage(row.id) } });
    }
    const changed = await changePlants(tx, actor, changes);
    for (const row of changes) {
      // Deleted, or given away, since it was read: "not found", as a PATCH answers.
      decided.push(changed.has(String(row.id)) ? { line: row.line, outcome: 'changed' } : { line: row.line, outcome: 'refused', refusal: { kind: 'plantNotFound', message: `no plant with id ${row.id}` } });
    }
    await recordOutcomes(tx, job.importId, decided);
    const tally = (outcome: ImportOutcome) => decided.filter((one) => one.outcome === outcome).length;
    const more = next.length > size;
    await tx.plantImport.update({
      where: { id: job.importId },
      data: {
        appliedThrough: rows.length > 0 ? rows[rows.length - 1]!.line : Number(state.appliedThrough),
        created: { increment: tally('created') },
        changed: { increment: tally('changed') },
        leftAsIs: { increment: tally('unchanged') },
        failed: { increment: tally('refused') },
        ...(more ? {} : { state: 'done', runner: null, runnerUntilMs: null }),
      },
    });
    return { rows: rows.length, more, created: tally('created'), changed: tally('changed') };
  });
}

/** New plants, the importer's, in one INSERT; a taken id (created meanwhile) inserts nothing. The ids created. */
async function createPlants(tx: Prisma.TransactionClient, ownerId: number, rows: RowToApply[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const now = new Date();
  const values = rows.map((row) => {
    const plant = { id: row.id, ...Object.fromEntries(Object.entries(row.fields).filter(([, value]) => value !== null)) } as NewPlant;
    return Prisma.sql`(${Prisma.join(insertedValues(ownerId, plant, now))})`;
  });
  // plant scope: the importer's own new plants (ownerId); it reads nothing of others'.
  const inserted = await tx.$queryRaw<{ id: bigint }[]>`INSERT INTO "Plant" (${INSERTED_COLUMNS}) VALUES ${Prisma.join(values)} ON CONFLICT ("id") DO NOTHING RETURNING "id"`;
  return new Set(inserted.map((row) => String(row.id)));
}

/**
 * Renames and re-tags in one UPDATE per set of fields the rows give (one, for the rows of one file), the
 * access rule in its WHERE as in a PATCH. The ids changed.
 */
async function changePlants(tx: Prisma.TransactionClient, actor: Actor, rows: RowToApply[]): Promise<Set<string>> {
  const changed = new Set<string>();
  const bySet = new Map<string, RowToApply[]>();
  for (const row of rows) {
    const given = PLANT_FIELD_NAMES.filter((field) => row.fields[field] !== undefined).join(',');
    bySet.set(given, [...(bySet.get(given) ?? []), row]);
  }
  for (const group of bySet.values()) {
    const columns = Object.keys(patchedColumns(group[0]!.fields));
    const values = group.map((row) => {
      const written = patchedColumns(row.fields);
      return Prisma.sql`(CAST(${row.id} AS BIGINT), ${Prisma.join(columns.map((column) => Prisma.sql`CAST(${written[column] ?? null} AS TEXT)`))})`;
    });
    const names = Prisma.raw(['"changedId"', ...columns.map((column) => `"${column}"`)].join(', '));
    const sets = Prisma.raw(columns.map((column) => `"${column}" = v."${column}"`).join(', '));
    const updated = await tx.$queryRaw<{ id: bigint }[]>`
      WITH v(${names}) AS (VALUES ${Prisma.join(values)})
      UPDATE "Plant" AS p SET ${sets} FROM v ${whereOf([Prisma.sql`p.id = v."changedId"`, ...plantScopeSql(actor)])} RETURNING "id"`;
    for (const row of updated) changed.add(String(row.id));
  }
  return changed;
}

/** What became of each row: one UPDATE per outcome, and one per refused row (each with its own words). */
async function recordOutcomes(tx: Prisma.TransactionClient, importId: number, decided: Decided[]): Promise<void> {
  for (const outcome of ['created', 'changed', 'unchanged'] as const) {
    const lines = decided.filter((one) => one.outcome === outcome).map((one) => one.line);
    if (lines.length > 0) await tx.plantImportRow.updateMany({ where: { importId, line: { in: lines } }, data: { outcome } });
  }
  for (const one of decided) {
    if (one.refusal === undefined) continue;
    await tx.plantImportRow.update({
      where: { importId_line: { importId, line: one.line } },
      data: { outcome: 'refused', error: errorCatalog[one.refusal.kind].value, message: one.refusal.message },
    });
  }
}

const sleep = (ms: number, job: Job) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    job.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });

/** Waits `ms` for the bucket, renewing the claim meanwhile; false when the import stopped being this job's. */
async function waitForUnits(job: Job, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!job.stopped && Date.now() < until) {
    await sleep(Math.min(until - Date.now(), RENEW_MS), job);
    if (!job.stopped && !(await renewClaim(db, job))) return false;
  }
  return !job.stopped;
}

/** The rows the apply has still to do, as its counts say (what the next charge is for). */
async function rowsLeft(importId: number): Promise<number> {
  const row = await db.plantImport.findUnique({ where: { id: importId }, select: { toCreate: true, toChange: true, unchanged: true, created: true, changed: true, leftAsIs: true, failed: true } });
  if (!row) return 0;
  return Math.max(0, row.toCreate + row.toChange + row.unchanged - (row.created + row.changed + row.leftAsIs + row.failed));
}

async function run(job: Job): Promise<void> {
  const sizer = sliceSizer(SLICE_SIZES);
  while (!job.stopped) {
    // The rows of the next slice are paid for before it runs; a last, shorter slice pays for its rows only.
    const rows = Math.max(1, Math.min(Math.max(SLICE_MIN_ROWS, sizer.size), await rowsLeft(job.importId)));
    const refused = await job.takeUnits(job.units(job.rowsPaid + rows) - job.units(job.rowsPaid));
    if (refused) {
      if (!(await waitForUnits(job, refused.retryAfterMs))) return;
      continue;
    }
    job.rowsPaid += rows;
    let outcome: SliceOutcome | undefined;
    // One slice in the lane all background work shares (it takes its turn, and rests as long after it).
    await runInSlices(
      async (): Promise<SliceResult> => {
        outcome = await applySlice(job, rows);
        return 'ended' in outcome ? { done: 0, more: false } : { done: outcome.rows, more: outcome.more };
      },
      {
        sizer,
        stopped: () => outcome !== undefined || job.stopped,
        onSlice: (result, elapsedMs) => {
          backgroundSliceDuration.observe({ job: 'import-apply' }, elapsedMs / 1000);
          if (result.done > 0) backgroundUnitsDone.inc({ job: 'import-apply' }, result.done);
        },
      },
    );
    if (outcome === undefined) return;
    if ('ended' in outcome) {
      if (outcome.ended === 'tokenGone') {
        await db.plantImport.updateMany({
          where: { id: job.importId, state: 'applying', runner: job.runner },
          data: { state: 'stopped', runner: null, runnerUntilMs: null, problem: 'the token that asked for the apply was revoked or expired: apply again with a token that works', updatedAtMs: nowMs() },
        });
      }
      return;
    }
    if (outcome.created + outcome.changed > 0) plantsCommitted({ outboxEvents: outcome.created > 0 });
    if (!outcome.more) return;
  }
}

function startJob(importId: number, runner: string, takeUnits: TakeUnits, units: (rows: number) => number, onError: (error: unknown) => void): void {
  const job: Job = { importId, runner, takeUnits, units, rowsPaid: 0, stopped: false, wake: () => {}, finished: Promise.resolve() };
  jobs.set(importId, job);
  job.finished = run(job)
    .catch(onError)
    .finally(() => {
      if (jobs.get(importId) === job) jobs.delete(importId);
    });
}

/**
 * Starts (or goes on with) the apply of a previewed import, in this process, after this call answers. One import
 * of a user is applied at a time. Asked again while it runs, or once done, it answers the import as it is; an
 * apply stopped, or interrupted (its process gone), goes on from the first row not applied.
 */
export async function applyImport(
  actor: Actor,
  tokenId: number,
  id: number,
  charge: { takeUnits: TakeUnits; units: (rows: number) => number },
  onError: (error: unknown) => void,
): Promise<PlantImport> {
  const row = await ownImport(actor, id);
  if (row.state === 'receiving') throw new AppError('importState', `the upload of import ${id} has not ended: ask for its preview first`);
  if (row.state === 'refused') throw new AppError('invalidCsv', row.problem ?? 'the file was refused');
  if (row.state === 'done' || (row.state === 'applying' && !isInterrupted(row))) return importView(row);
  const at = nowMs();
  const runner = randomUUID();
  // One apply per user at a time: the claim holds only while no other import of theirs is being applied.
  const claimed = await db.$executeRaw`
    UPDATE "PlantImport" SET "state" = 'applying', "runner" = ${runner}, "runnerUntilMs" = ${at + BigInt(CLAIM_MS)}, "tokenId" = ${tokenId},
      "problem" = NULL, "updatedAtMs" = ${at}
    WHERE "id" = ${id} AND "state" = ${row.state} AND "updatedAtMs" = ${row.updatedAtMs}
      AND NOT EXISTS (SELECT 1 FROM "PlantImport" o WHERE o."userId" = ${actor.userId} AND o."id" <> ${id} AND o."state" = 'applying' AND o."runnerUntilMs" >= ${at})`;
  if (claimed === 0) {
    const busy = await db.plantImport.findFirst({ where: { userId: actor.userId, id: { not: id }, state: 'applying', runnerUntilMs: { gte: at } }, select: { id: true } });
    if (busy) throw new AppError('importState', `import ${busy.id} of yours is being applied: stop it, or wait until it is done`);
    // Another call changed this import meanwhile (an apply or a Stop): it is as that call left it.
    return importView(await ownImport(actor, id));
  }
  startJob(id, runner, charge.takeUnits, charge.units, onError);
  return importView(await ownImport(actor, id));
}

/**
 * Stops an apply after the slice running now (if any): what is applied stays, nothing more is written, and the
 * import can be applied again to go on. Any other state is answered as it is.
 */
export async function stopImport(actor: Actor, id: number): Promise<PlantImport> {
  const row = await ownImport(actor, id);
  if (row.state === 'applying') {
    await db.plantImport.updateMany({ where: { id, state: 'applying' }, data: { state: 'stopped', runner: null, runnerUntilMs: null, updatedAtMs: nowMs() } });
    const job = jobs.get(id);
    if (job) {
      job.stopped = true;
      job.wake();
    }
  }
  return importView(await ownImport(actor, id));
}

/**
 * For a shutdown: every job of this process ends after its slice, and lets go of its import at once (it reads
 * "interrupted", and an apply on any instance goes on from where it got to).
 */
export async function stopImportJobs(): Promise<void> {
  const running = [...jobs.values()];
  for (const job of running) {
    job.stopped = true;
    job.wake();
  }
  await Promise.all(running.map((job) => job.finished));
  for (const job of running) await db.plantImport.updateMany({ where: { id: job.importId, state: 'applying', runner: job.runner }, data: { runnerUntilMs: 0n } });
}
