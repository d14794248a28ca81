import 'server-only';

import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';

import { db, engine, sqliteConnection } from './client';

const AUTO_VACUUM_INCREMENTAL = 2;
/** At most this many pages in one slice: 4 MB written to the WAL, about what SQLite checkpoints at once. */
const FREE_PAGES_SLICE_MAX = 1_024;

const pragmaNumber = async (name: string) => Number(Object.values((await db.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0] ?? {})[0] ?? 0);

/**
 * Gives at most `size` of the SQLite file's free pages back to the file system, in one statement and one
 * commit. SQLite keeps the pages of deleted rows in the file and reuses them for later writes, so without
 * this the file stays as large as it ever was (an expired day of idempotency keys, a week of delivered
 * webhooks, deleted plants). `PRAGMA incremental_vacuum(N)` gives back N pages only when stepped to its end,
 * which the adapter's statements never do (they step once: one page each), so it runs as a script on the
 * client's connection, taking its turn with transactions like any statement (sqlite-isolation.ts).
 */
export async function returnFreePages(size: number): Promise<SliceResult> {
  const before = await pragmaNumber('freelist_count');
  if (before === 0 || sqliteConnection() === undefined) return { done: 0, more: false };
  // Never 0 or less: that would give back every free page at once.
  await sqliteConnection()!.executeScript(`PRAGMA incremental_vacuum(${Math.max(1, Math.min(Math.floor(size), before))})`);
  const after = await pragmaNumber('freelist_count');
  return { done: Math.max(0, before - after), more: after > 0 && after < before };
}

/** The SQLite file's free pages: a number in its header, read at once. */
export function countFreePages(): Promise<number> {
  return pragmaNumber('freelist_count');
}

/**
 * Gives the SQLite file's free pages back at the start and then every `everyMs` (a minute), in slices
 * (background/slices.ts), whoever freed them. Needs `auto_vacuum = INCREMENTAL`, which the migration runner
 * gives every new file; on an older file (its free pages are reused, never given back) and on PostgreSQL
 * (whose own vacuum keeps freed space for reuse) there is no such job: resolves to undefined.
 */
export async function startReturningFreePages(options: { everyMs?: number; onError: (error: unknown) => void }): Promise<BackgroundJob | undefined> {
  if (engine !== 'sqlite' || (await pragmaNumber('auto_vacuum')) !== AUTO_VACUUM_INCREMENTAL) return undefined;
  return startBackgroundJob({
    name: 'sqlite-free-pages',
    everyMs: options.everyMs ?? 60_000,
    step: returnFreePages,
    sizes: { initial: 64, max: FREE_PAGES_SLICE_MAX },
    backlog: countFreePages,
    onError: options.onError,
  });
}
