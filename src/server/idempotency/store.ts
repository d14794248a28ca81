import 'server-only';

import { type BackgroundJob, type SliceResult, startBackgroundJob } from '@/server/background/slices';
import { db } from '@/server/db/client';
import { isUniqueViolation } from '@/server/db/error-codes';
import { IDEMPOTENCY_KEYS_PER_USER } from '@/shared/limits';

/**
 * Idempotency keys in the database, so a retry is recognised by any instance and after a restart. A key
 * belongs to one user (the same key from two users is two keys) and lives 24 hours from its first use.
 *
 * The first request with a key inserts its row, "in flight" (no status yet); the primary key on
 * (user, key) lets exactly one of any number of parallel requests do that, on either engine. The winner
 * carries the request out and stores the answer; the others read the row: a different body is a mismatch
 * (422), no answer yet is in flight (409), an answer is replayed. A request that dies in flight (a crash)
 * holds its key only until `lockedUntil`; the next retry then takes it over and carries the request out
 * again. (A create that had committed before the crash then answers 400 "id already exists": nothing is
 * created twice, but that retry does not see the original 200.)
 *
 * What one user keeps is bounded: IDEMPOTENCY_KEYS_PER_USER keys, the oldest answered ones evicted when a
 * new key comes (with only answers of operations that started, and no answer over 4 KiB, that is ~16 MB at
 * most per user). Evicting rather than refusing keeps a busy client working: its retries come within
 * minutes, and the 10,000 newest keys cover that at any rate the rate limit allows; a retry with an evicted
 * key runs again, which for a create (ids are the client's) is a 400 "id already exists", never a second plant.
 */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Longer than any create takes (the database waits at most 10 s for a lock or a connection). */
export const IN_FLIGHT_LEASE_MS = 30_000;

export type StoredAnswer = { status: number; body: string };

export type Claim =
  /** This request carries the operation out, then calls completeKey or releaseKey. */
  | { kind: 'claimed' }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'inFlight' }
  | { kind: 'mismatch' };

type KeyRef = { userId: number; key: string };

export async function claimKey({ userId, key }: KeyRef, fingerprint: string, now = new Date()): Promise<Claim> {
  const lockedUntil = new Date(now.getTime() + IN_FLIGHT_LEASE_MS);
  // Each round either decides, or saw the row change under it (expired and removed, or taken over): a few
  // rounds settle any race.
  for (let round = 0; round < 4; round++) {
    try {
      await db.idempotencyKey.create({
        data: { userId, key, fingerprint, lockedUntil, createdAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS) },
        select: { userId: true },
      });
      await evictBeyondBound(userId);
      return { kind: 'claimed' };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const row = await db.idempotencyKey.findUnique({
      where: { userId_key: { userId, key } },
      select: { fingerprint: true, status: true, response: true, lockedUntil: true, expiresAt: true },
    });
    if (!row) continue;
    if (row.expiresAt <= now) {
      // Past its 24 hours: as if never used. Only that old row goes, not one a parallel request just made.
      await db.idempotencyKey.deleteMany({ where: { userId, key, expiresAt: row.expiresAt } });
      continue;
    }
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.status !== null) return { kind: 'replay', answer: { status: row.status, body: row.response ?? '' } };
    if (row.lockedUntil > now) return { kind: 'inFlight' };
    // The request that held the key died without answering: take it over, unless another retry just did.
    const { count } = await db.idempotencyKey.updateMany({
      where: { userId, key, status: null, lockedUntil: row.lockedUntil },
      data: { lockedUntil },
    });
    if (count === 1) return { kind: 'claimed' };
  }
  return { kind: 'inFlight' };
}

/**
 * Keeps a user's keys to IDEMPOTENCY_KEYS_PER_USER, evicting the oldest answered ones: one walk of the
 * (userId, createdAt) index to the boundary (~0.3 ms for 10,000 keys on SQLite), and a delete only when the
 * user has more. Keys in flight are never evicted (there are at most as many as requests running).
 */
async function evictBeyondBound(userId: number): Promise<void> {
  const boundary = await db.idempotencyKey.findFirst({
    where: { userId },
    orderBy: { createdAt: 'desc' },
    skip: IDEMPOTENCY_KEYS_PER_USER,
    select: { createdAt: true },
  });
  if (boundary) await db.idempotencyKey.deleteMany({ where: { userId, createdAt: { lte: boundary.createdAt }, status: { not: null } } });
}

/** Keeps the answer of the request that claimed the key, for the retries of the next 24 hours. */
export async function completeKey({ userId, key }: KeyRef, answer: StoredAnswer): Promise<void> {
  await db.idempotencyKey.updateMany({ where: { userId, key, status: null }, data: { status: answer.status, response: answer.body } });
}

/** Lets go of a claimed key without an answer (the server failed): the next retry carries the request out. */
export async function releaseKey({ userId, key }: KeyRef): Promise<void> {
  await db.idempotencyKey.deleteMany({ where: { userId, key, status: null } });
}

/** At most this many keys in one slice's delete (two parameters each, within any engine's bound). */
const SWEEP_SLICE_MAX = 1_024;
/** The backlog shown in /api/metrics is counted up to this: a scrape reads no more of the index than that. */
export const EXPIRED_KEYS_COUNTED_UP_TO = 10_000;

/**
 * Deletes at most `size` keys past their 24 hours, oldest first, by their primary key (so a key a request
 * has just claimed again, with a new expiry, stays). Expired keys are ignored by claimKey anyway; this only
 * frees their space, which on SQLite is then given back to the file system by its own job (db/sqlite-vacuum.ts).
 */
export async function sweepExpiredKeys(size: number, now = new Date()): Promise<SliceResult> {
  const expired = await db.idempotencyKey.findMany({
    where: { expiresAt: { lt: now } },
    orderBy: { expiresAt: 'asc' },
    take: size,
    select: { userId: true, key: true },
  });
  if (expired.length === 0) return { done: 0, more: false };
  const keysByUser = new Map<number, string[]>();
  for (const { userId, key } of expired) {
    const keys = keysByUser.get(userId);
    if (keys) keys.push(key);
    else keysByUser.set(userId, [key]);
  }
  const { count } = await db.idempotencyKey.deleteMany({
    where: { expiresAt: { lt: now }, OR: [...keysByUser].map(([userId, keys]) => ({ userId, key: { in: keys } })) },
  });
  return { done: count, more: expired.length === size };
}

/** Keys past their 24 hours still in the table, counted up to EXPIRED_KEYS_COUNTED_UP_TO. */
export function countExpiredKeys(now = new Date()): Promise<number> {
  return db.idempotencyKey.count({ where: { expiresAt: { lt: now } }, take: EXPIRED_KEYS_COUNTED_UP_TO });
}

/**
 * Sweeps at the start and then every `everyMs` (10 minutes), in slices (background/slices.ts); each instance
 * may run one (deletes are idempotent).
 */
export function startIdempotencySweep(options: { everyMs?: number; onError: (error: unknown) => void }): BackgroundJob {
  return startBackgroundJob({
    name: 'idempotency-sweep',
    everyMs: options.everyMs ?? 10 * 60 * 1000,
    step: (size) => sweepExpiredKeys(size),
    sizes: { initial: 64, max: SWEEP_SLICE_MAX },
    backlog: () => countExpiredKeys(),
    onError: options.onError,
  });
}
