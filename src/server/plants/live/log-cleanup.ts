import 'server-only';

import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { db } from '@/server/db/client';

import { PLANT_CHANGE_RETENTION_MS } from './feed';

/** The job's name in /api/metrics (`plantstore_background_*{job="live-feed-log"}`). */
export const CHANGE_LOG_JOB = 'live-feed-log';
/** A pass this often: the log keeps 10 minutes, so a minute's lag is a tenth more rows at most. */
export const CLEANUP_EVERY_MS = 60_000;
/** At most this many rows in one slice's delete (a power of two, as the slices' sizes are). */
const SLICE_ROWS_MAX = 4_096;

/**
 * Deletes at most `size` of the oldest rows of the live feed's change log past its retention (by the atMs index),
 * in one statement. The log grows with every change of a plant, listened to or not, so this runs as a background
 * job of its own (background/slices.ts): at the start and every minute, whether or not a feed is open, in slices
 * sized to ~10 ms. Every instance may run it (a row deleted twice is deleted once).
 */
export async function deleteExpiredChanges(size: number, now = Date.now()): Promise<SliceResult> {
  const cutoff = BigInt(now - PLANT_CHANGE_RETENTION_MS);
  const done = await db.$executeRaw`DELETE FROM "PlantChange" WHERE "seq" IN (SELECT "seq" FROM "PlantChange" WHERE "atMs" < ${cutoff} ORDER BY "atMs" LIMIT ${size})`;
  return { done, more: done === size };
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

export function startChangeLogCleanup(options: { everyMs?: number; onError: (error: unknown) => void }): BackgroundJob {
  return startBackgroundJob({
    name: CHANGE_LOG_JOB,
    everyMs: options.everyMs ?? CLEANUP_EVERY_MS,
    step: (size) => deleteExpiredChanges(size),
    sizes: { initial: 64, max: SLICE_ROWS_MAX },
    backlog: () => changeLogBacklog(),
    onError: options.onError,
  });
}
