import 'server-only';

import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { db } from '@/server/db/client';
import { IMPORT_KEPT_MS } from '@/shared/limits';

/**
 * Imports untouched for IMPORT_KEPT_MS, and those a user let go of by starting more than they keep
 * (store.ts, startImport), are removed with their rows: a slice deletes at most `size` rows of one import,
 * then the import itself once it has none. An import whose apply is alive is never swept (its claim renews
 * `updatedAtMs` every slice, and an interrupted one is kept as long as any other).
 */
async function oldestGone(): Promise<number | undefined> {
  const found = await db.plantImport.findFirst({ where: { updatedAtMs: { lt: BigInt(Date.now() - IMPORT_KEPT_MS) } }, orderBy: { updatedAtMs: 'asc' }, select: { id: true } });
  return found?.id;
}

export async function sweepImports(size: number): Promise<SliceResult> {
  const id = await oldestGone();
  if (id === undefined) return { done: 0, more: false };
  // The rows up to the size-th line: one statement whatever the engine (neither has DELETE … LIMIT in common).
  const deleted = await db.$executeRaw`
    DELETE FROM "PlantImportRow" WHERE "importId" = ${id} AND "line" <= (
      SELECT MAX(r."line") FROM (SELECT "line" FROM "PlantImportRow" WHERE "importId" = ${id} ORDER BY "line" LIMIT ${size}) r)`;
  if (deleted < size) await db.plantImport.deleteMany({ where: { id, updatedAtMs: { lt: BigInt(Date.now() - IMPORT_KEPT_MS) } } });
  return { done: deleted, more: true };
}

/** A scrape counts no further: the gauge says "behind", and a count of 10,000,000 rows would cost the scrape seconds. */
const BACKLOG_COUNTED_MAX = 10_000;

/** Rows of imports that are gone, waiting to be deleted (for /api/metrics), up to BACKLOG_COUNTED_MAX. */
async function rowsGone(): Promise<number> {
  return db.plantImportRow.count({ where: { import: { updatedAtMs: { lt: BigInt(Date.now() - IMPORT_KEPT_MS) } } }, take: BACKLOG_COUNTED_MAX });
}

export function startImportSweep(options: { everyMs?: number; onError: (error: unknown) => void }): BackgroundJob {
  return startBackgroundJob({
    name: 'import-sweep',
    everyMs: options.everyMs ?? 10 * 60 * 1000,
    step: sweepImports,
    sizes: { initial: 256, max: 4096 },
    backlog: rowsGone,
    onError: options.onError,
  });
}
