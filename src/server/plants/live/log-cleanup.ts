import 'server-only';

import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';

import { db, engine } from '@/server/db/client';
import { changeLogCleanupSlices } from '@/server/observability/metrics';

import { PLANT_CHANGE_RETENTION_MS } from './feed';

/**
 * Deletes the live feed's change log past its retention, on a schedule of its own: every CLEANUP_EVERY_MS
 * whether or not any feed is open (the log grows with every change of a plant, listened to or not), and in
 * slices: one statement deletes the oldest expired rows, and the next waits for a turn of the event loop, so
 * requests go between them. On SQLite a statement holds the event loop while it runs, so a slice deletes as many
 * rows as fit in SLICE_TARGET_MS (the count adapts to what the last slice took); on PostgreSQL it holds nothing
 * of this process, and a slice is SLICE_ROWS_MAX rows, a short transaction. Every instance may run it (a row deleted
 * twice is deleted once). Its backlog is `plantstore_live_feed_log_backlog_rows` in /api/metrics, each slice's
 * time `plantstore_live_feed_log_cleanup_slice_seconds`.
 */
export const CLEANUP_EVERY_MS = 60_000;
/** The first run after start, once the server is serving. */
const FIRST_RUN_AFTER_MS = 1_000;
const SLICE_TARGET_MS = 8;
const SLICE_ROWS_FIRST = 200;
const SLICE_ROWS_MIN = 10;
const SLICE_ROWS_MAX = 5_000;

/** Rows deleted per slice: grown while slices are quick, halved when one took too long. */
let sliceRows = SLICE_ROWS_FIRST;

/** One slice: the oldest expired rows (by the atMs index), up to `rows`; resolves to how many were deleted. */
function deleteSlice(cutoffMs: bigint, rows: number): Promise<number> {
  return db.$executeRaw`DELETE FROM "PlantChange" WHERE "seq" IN (SELECT "seq" FROM "PlantChange" WHERE "atMs" < ${cutoffMs} ORDER BY "atMs" LIMIT ${rows})`;
}

/** Deletes every row past the retention, slice by slice; resolves to how many. */
export async function cleanChangeLog(now = Date.now()): Promise<number> {
  const cutoff = BigInt(now - PLANT_CHANGE_RETENTION_MS);
  let deleted = 0;
  for (;;) {
    const rows = sliceRows;
    const started = performance.now();
    const count = await deleteSlice(cutoff, rows);
    const took = performance.now() - started;
    changeLogCleanupSlices.observe(took / 1000);
    deleted += count;
    if (engine !== 'sqlite') sliceRows = SLICE_ROWS_MAX;
    else if (took > SLICE_TARGET_MS) sliceRows = Math.max(SLICE_ROWS_MIN, Math.floor(sliceRows / 2));
    else if (took < SLICE_TARGET_MS / 2 && count === rows) sliceRows = Math.min(SLICE_ROWS_MAX, sliceRows * 2);
    if (count < rows) return deleted;
    await nextTurn();
  }
}

/**
 * Rows past the retention still in the log, counted by position (the newest expired row's seq and the oldest
 * row's: two index reads at any size, where a count would read them all); at most this many.
 */
export async function changeLogBacklog(now = Date.now()): Promise<number> {
  const cutoff = BigInt(now - PLANT_CHANGE_RETENTION_MS);
  const [row] = await db.$queryRaw<{ newest: number | bigint | null; oldest: number | bigint | null }[]>`
    SELECT (SELECT "seq" FROM "PlantChange" WHERE "atMs" < ${cutoff} ORDER BY "atMs" DESC LIMIT 1) AS newest,
           (SELECT MIN("seq") FROM "PlantChange") AS oldest`;
  if (row?.newest === null || row?.newest === undefined || row.oldest === null) return 0;
  return Math.max(0, Number(row.newest) - Number(row.oldest) + 1);
}

/** Cleans now (after a second) and then every `everyMs` until stopped. */
export function startChangeLogCleanup(options: { everyMs?: number; onError: (error: unknown) => void }): { stop: () => void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const run = () => {
    cleanChangeLog()
      .catch(options.onError)
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(run, options.everyMs ?? CLEANUP_EVERY_MS);
        timer.unref();
      });
  };
  timer = setTimeout(run, FIRST_RUN_AFTER_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
