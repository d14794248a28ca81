import 'server-only';

import { holdStream, type StreamEnding } from '@/server/auth/held-streams';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { onDatabaseSignal, onHeardChange, signalsHeard } from '@/server/db/signals';
import { AppError } from '@/shared/errors';
import { PLANT_FIELD_NAMES, type PlantFieldName, type StoredFields } from '@/shared/plants';
import { MAX_STREAMS, MAX_STREAMS_PER_TOKEN } from '@/shared/limits';

import { onPlantsCommitted } from '../events';
import { inPlantScope } from '../scope';

import { eventIdsFor } from './event-ids';

/**
 * The live feed behind `plants.changes`: what changed in the plants, as it commits, on every instance.
 *
 * Every committed change leaves a row in PlantChange, written by a trigger in the statement that made it
 * (whichever door, process or instance), so the log is the one truth; each process runs one reader for all its
 * open streams, which reads the log when told that something committed, and hands each stream what its caller
 * may see: a member only their own plants, an admin all. It is told by its own commits at once (events.ts) and by
 * everyone's through the database's signals (db/signals.ts): PostgreSQL's NOTIFY at the commit, SQLite's
 * data_version within SQLITE_WATCH_MS. While those are not heard (PostgreSQL's listening connection is down) it
 * polls the log every POLL_MS instead, and reads it once more when they are back. With no stream open it reads
 * nothing, and forgets its position: the next stream starts at the log's end, not where the last one left.
 *
 * Positions are the log's `seq`. On PostgreSQL a sequence number is taken before its transaction commits,
 * so a lower one can appear after a higher one; the reader keeps what it has seen above its position and
 * waits up to GAP_MS for a missing number before it counts it as a rolled-back write. A stream that
 * reconnects with tRPC's `lastEventId` is sent the rows after it from the log, or, when more than
 * REPLAY_MAX changed meanwhile (or the log no longer reaches back so far), one `resync`: reload the page.
 * Clients see positions only as opaque ids (event-ids.ts), which tell nothing of other users' changes.
 *
 * A stream ends when the token it was opened with no longer allows it (auth/held-streams.ts): revoked, expired
 * or deleted, with the token's 401; speaking for someone else now (a demotion), as a time limit ends it.
 */
export const POLL_MS = 250;
const GAP_MS = 3_000;
const BATCH = 1_000;
export const REPLAY_MAX = 500;
/** More changes than this in one poll go to a stream as one `resync`: nobody reads 10,000 marks. */
const BURST_MAX = 200;
/** The log keeps this much: long enough for any reconnect; older rows are deleted by log-cleanup.ts. */
export const PLANT_CHANGE_RETENTION_MS = 10 * 60 * 1000;

export type PlantChangeEvent =
  /** First on a new stream: from here on every change arrives (the client may start listening from it). */
  | { kind: 'live' }
  /** The plant as its columns now hold it: the declared fields (shared/plants.ts), an optional one null when removed. */
  | ({ kind: 'created' | 'updated'; id: bigint } & StoredFields)
  | { kind: 'deleted'; id: bigint }
  | { kind: 'resync' };

/** A log row: the change, and the declared fields as they were written (NULL in a deletion's row). */
type LogRow = { seq: number; plantId: bigint; ownerId: number; kind: string } & { [Field in PlantFieldName]: StoredFields[Field] | null };
const LOG_COLUMNS = { seq: true, plantId: true, ownerId: true, kind: true, ...Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, true])) } as const;
type Delivery = { seq: number; event: PlantChangeEvent };
type Stream = { actor: Actor; tokenId: number; push: (batch: Delivery[]) => void };

const sees = (actor: Actor, row: LogRow) => inPlantScope(actor, row.ownerId);

function eventOf(row: LogRow): PlantChangeEvent {
  if (row.kind === 'deleted') return { kind: 'deleted', id: BigInt(row.plantId) };
  const fields = Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, row[field]])) as StoredFields;
  return { kind: row.kind === 'created' ? 'created' : 'updated', id: BigInt(row.plantId), ...fields };
}

/**
 * The log's last position (null: empty), one step down its primary key. (Prisma's `aggregate` wraps MAX in a
 * subquery that reads every row: 20–30 ms on a log of 300,000.)
 */
async function logEnd(): Promise<number | null> {
  const last = await db.plantChange.findFirst({ orderBy: { seq: 'desc' }, select: { seq: true } });
  return last?.seq ?? null;
}

async function readLog(afterSeq: number, limit: number): Promise<LogRow[]> {
  const rows = await db.plantChange.findMany({
    where: { seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit,
    select: LOG_COLUMNS,
  });
  return rows as unknown as LogRow[];
}

function batchFor(stream: Stream, rows: LogRow[]): Delivery[] {
  const visible = rows.filter((row) => sees(stream.actor, row));
  if (visible.length > BURST_MAX) return [{ seq: visible[visible.length - 1]!.seq, event: { kind: 'resync' } }];
  return visible.map((row) => ({ seq: row.seq, event: eventOf(row) }));
}

/** One reader per process. Created on the first stream, idle (no timer, no query) while none is open. */
function createReader() {
  const streams = new Set<Stream>();
  /** Every seq at or below this was handed out, or given up as a rolled-back write; null while no stream is open. */
  let position: number | null = null;
  /** Moves whenever the position is forgotten: a read begun before then must not move the new one. */
  let epoch = 0;
  const seenAbove = new Set<number>();
  let gapSince: number | null = null;
  let gapTimer: NodeJS.Timeout | undefined;
  /** Polls while the database's signals are not heard. */
  let fallback: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;

  async function start(): Promise<void> {
    if (position !== null) return;
    const end = await logEnd();
    position ??= end ?? 0;
  }

  async function poll(): Promise<void> {
    const from = position;
    const readIn = epoch;
    if (streams.size === 0 || from === null) return;
    const read = await readLog(from, BATCH);
    // Every stream closed meanwhile, and the position was forgotten with them (and maybe taken anew).
    if (position === null || epoch !== readIn) return;
    const rows = read.filter((row) => !seenAbove.has(row.seq));
    for (const row of rows) seenAbove.add(row.seq);
    for (const stream of streams) {
      const batch = batchFor(stream, rows);
      if (batch.length > 0) stream.push(batch);
    }
    // The position moves over what was seen; a missing number holds it for GAP_MS.
    for (;;) {
      if (seenAbove.delete(position + 1)) {
        position += 1;
        gapSince = null;
      } else if (seenAbove.size > 0) {
        gapSince ??= Date.now();
        if (Date.now() - gapSince < GAP_MS) break;
        position += 1;
      } else {
        break;
      }
    }
    // A missing number that never commits sends no signal: look again when its wait is over.
    if (gapSince !== null && gapTimer === undefined) {
      gapTimer = setTimeout(() => {
        gapTimer = undefined;
        pollSoon();
      }, GAP_MS);
      gapTimer.unref();
    }
    // A full batch means more are waiting.
    if (read.length === BATCH) again = true;
  }

  function pollSoon(): void {
    if (streams.size === 0) return;
    if (running) {
      again = true;
      return;
    }
    running = poll()
      .catch(() => undefined)
      .finally(() => {
        running = null;
        if (again && streams.size > 0) {
          again = false;
          pollSoon();
        }
      });
  }

  function pollWhileNotHeard(): void {
    const needed = streams.size > 0 && !signalsHeard();
    if (needed && fallback === undefined) {
      fallback = setInterval(pollSoon, POLL_MS);
      fallback.unref();
    } else if (!needed && fallback !== undefined) {
      clearInterval(fallback);
      fallback = undefined;
    }
  }

  // Every commit of this process, one row or many, whichever door: the log has its rows already. And every
  // commit anywhere, as the database signals it.
  onPlantsCommitted(pollSoon);
  onDatabaseSignal('plants', () => pollSoon());
  onHeardChange((heard) => {
    pollWhileNotHeard();
    // What committed while nothing was heard is in the log: read it now.
    if (heard) pollSoon();
  });

  return {
    streams,
    get position() {
      return position;
    },
    /** Counted at once (the limits see it), fed once `start` has read the log's end. */
    register(stream: Stream): void {
      streams.add(stream);
    },
    async start(): Promise<void> {
      await start();
      pollWhileNotHeard();
    },
    remove(stream: Stream): void {
      streams.delete(stream);
      if (streams.size > 0) return;
      pollWhileNotHeard();
      clearTimeout(gapTimer);
      gapTimer = undefined;
      position = null;
      epoch += 1;
      seenAbove.clear();
      gapSince = null;
    },
  };
}

let reader: ReturnType<typeof createReader> | undefined;

function countOpen(tokenId: number): number {
  let open = 0;
  for (const stream of reader?.streams ?? []) if (stream.tokenId === tokenId) open += 1;
  return open;
}

/** How a stream ends when its token no longer allows it (auth/held-streams.ts). */
function endingError(why: StreamEnding): Error {
  if (why === 'accessEnded') return new AppError('invalidToken', 'the bearer token is no longer valid: it was revoked or has expired, or its user was deleted');
  // Ended as the time limit ends a stream: the client reconnects through the guards, as whoever the token is now.
  return new DOMException('the token now speaks for someone else: reconnect', 'AbortError');
}

/**
 * The changes the actor may see, from now on (or after `lastEventId`), as [event id, event] pairs, until the
 * signal aborts (the client went away) or the token no longer allows it. Refused with 429 past
 * MAX_STREAMS_PER_TOKEN open streams for the token, or MAX_STREAMS for the process.
 */
export async function* plantChanges(actor: Actor, tokenId: number, lastEventId: string | null | undefined, signal: AbortSignal | undefined): AsyncGenerator<[string, PlantChangeEvent]> {
  reader ??= createReader();
  if (countOpen(tokenId) >= MAX_STREAMS_PER_TOKEN) {
    throw new AppError('tooManyRequests', `at most ${MAX_STREAMS_PER_TOKEN} live feeds may be open per token; close one (another tab) first`);
  }
  if (reader.streams.size >= MAX_STREAMS) throw new AppError('tooManyRequests', 'this server has as many live feeds open as it takes; try again in a minute');

  const queue: Delivery[] = [];
  let wake: (() => void) | null = null;
  let ending: StreamEnding | undefined;
  const stream: Stream = {
    actor,
    tokenId,
    push(batch) {
      // A stream that does not read (a stalled client) holds at most this much before it is told to reload.
      if (queue.length + batch.length > BURST_MAX * 5) queue.splice(0, queue.length, { seq: batch[batch.length - 1]!.seq, event: { kind: 'resync' } });
      else queue.push(...batch);
      wake?.();
    },
  };
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  reader.register(stream);
  const release = holdStream({
    tokenId,
    actor,
    end(why) {
      ending ??= why;
      wake?.();
    },
  });
  try {
    const ids = await eventIdsFor(actor.userId);
    // An id that is not one this user was sent (another's, a forged one, one of the numbers of before): a resync.
    const from = lastEventId ? (ids.positionOf(lastEventId) ?? 'unknown') : null;
    // A new stream starts at the log's end: what changed before it opened is in the page it is shown with.
    const startedAfter = typeof from === 'number' ? null : await logEnd();
    await reader.start();
    if (from === null) yield [ids.idOf(startedAfter ?? 0), { kind: 'live' }];
    if (from === 'unknown') yield [ids.idOf(startedAfter ?? 0), { kind: 'resync' }];
    if (typeof from === 'number') {
      const replay = (await readLog(from, REPLAY_MAX + 1)).filter((row) => sees(actor, row));
      const oldest = await db.plantChange.findFirst({ orderBy: { seq: 'asc' }, select: { seq: true } });
      const reachesBack = oldest ? oldest.seq <= from + 1 : from >= (reader.position ?? 0);
      if (replay.length > REPLAY_MAX || !reachesBack) {
        yield [ids.idOf(Math.max(from, reader.position ?? 0)), { kind: 'resync' }];
      } else {
        const replayed = new Set(replay.map((row) => row.seq));
        for (const row of replay) {
          if (ending) throw endingError(ending);
          yield [ids.idOf(row.seq), eventOf(row)];
        }
        // What the reader handed out meanwhile and the replay already sent, once only.
        for (let index = queue.length - 1; index >= 0; index--) if (replayed.has(queue[index]!.seq)) queue.splice(index, 1);
      }
    }
    const after = typeof from === 'number' ? from : startedAfter;
    for (;;) {
      if (ending) throw endingError(ending);
      // Ended by the client or by the stream's time limit: an abort (not a return) lets the client reconnect and resume.
      if (signal?.aborted) throw signal.reason;
      if (queue.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      const next = queue.shift()!;
      // Sent already (before the connection this stream resumes dropped), or before this stream started.
      if (after !== null && next.event.kind !== 'resync' && next.seq <= after) continue;
      yield [ids.idOf(next.seq), next.event];
    }
  } finally {
    release();
    signal?.removeEventListener('abort', onAbort);
    reader.remove(stream);
  }
}
