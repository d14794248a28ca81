import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { PLANT_FIELD_NAMES, type PlantFieldName, type StoredFields } from '@/shared/plants';
import { MAX_STREAMS, MAX_STREAMS_PER_TOKEN } from '@/shared/limits';

import { onPlantsCommitted } from '../events';
import { inPlantScope } from '../scope';

/**
 * The live feed behind `plants.changes`: what changed in the plants, within a second, on every instance.
 *
 * Every committed change leaves a row in PlantChange, written by a trigger in the statement that made it
 * (whichever door, process or instance), so the log is the one truth; each process runs one reader for all
 * its open streams, which polls the log while anyone listens (every POLL_MS, and at once after a commit of
 * its own) and hands each stream what its caller may see: a member only their own plants, an admin all.
 *
 * Positions are the log's `seq`. On PostgreSQL a sequence number is taken before its transaction commits,
 * so a lower one can appear after a higher one; the reader keeps what it has seen above its position and
 * waits up to GAP_MS for a missing number before it counts it as a rolled-back write. A stream that
 * reconnects with tRPC's `lastEventId` is sent the rows after it from the log, or, when more than
 * REPLAY_MAX changed meanwhile (or the log no longer reaches back so far), one `resync`: reload the page.
 */
export const POLL_MS = 250;
const GAP_MS = 3_000;
const BATCH = 1_000;
export const REPLAY_MAX = 500;
/** More changes than this in one poll go to a stream as one `resync`: nobody reads 10,000 marks. */
const BURST_MAX = 200;
/** The log keeps this much: long enough for any reconnect; older rows are swept once a minute. */
export const PLANT_CHANGE_RETENTION_MS = 10 * 60 * 1000;
const SWEEP_EVERY_MS = 60_000;

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
type Stream = { actor: Actor; tokenKey: string; push: (batch: Delivery[]) => void };

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
  /** Every seq at or below this was handed out, or given up as a rolled-back write. */
  let position: number | null = null;
  const seenAbove = new Set<number>();
  let gapSince: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let lastSweep = 0;

  async function start(): Promise<void> {
    if (position !== null) return;
    const end = await logEnd();
    position ??= end ?? 0;
  }

  async function poll(): Promise<void> {
    if (streams.size === 0 || position === null) return;
    const rows = (await readLog(position, BATCH)).filter((row) => !seenAbove.has(row.seq));
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
    if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
      lastSweep = Date.now();
      await db.plantChange.deleteMany({ where: { atMs: { lt: BigInt(Date.now() - PLANT_CHANGE_RETENTION_MS) } } });
    }
    // A full batch means more are waiting.
    if (rows.length === BATCH) again = true;
  }

  function pollSoon(): void {
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

  // Every commit of this process, one row or many, whichever door: the log has its rows already.
  const stopWaking = onPlantsCommitted(pollSoon);
  void stopWaking;

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
      timer ??= setInterval(pollSoon, POLL_MS);
      timer.unref?.();
    },
    remove(stream: Stream): void {
      streams.delete(stream);
      if (streams.size === 0 && timer) {
        clearInterval(timer);
        timer = undefined;
      }
    },
  };
}

let reader: ReturnType<typeof createReader> | undefined;

function countOpen(tokenKey: string): number {
  let open = 0;
  for (const stream of reader?.streams ?? []) if (stream.tokenKey === tokenKey) open += 1;
  return open;
}

/**
 * The changes the actor may see, from now on (or after `lastEventId`), as [seq, event] pairs, until the
 * signal aborts (the client went away). Refused with 429 past MAX_STREAMS_PER_TOKEN open streams for the
 * token, or MAX_STREAMS for the process.
 */
export async function* plantChanges(actor: Actor, tokenKey: string, lastEventId: string | null | undefined, signal: AbortSignal | undefined): AsyncGenerator<[number, PlantChangeEvent]> {
  reader ??= createReader();
  if (countOpen(tokenKey) >= MAX_STREAMS_PER_TOKEN) {
    throw new AppError('tooManyRequests', `at most ${MAX_STREAMS_PER_TOKEN} live feeds may be open per token; close one (another tab) first`);
  }
  if (reader.streams.size >= MAX_STREAMS) throw new AppError('tooManyRequests', 'this server has as many live feeds open as it takes; try again in a minute');

  const queue: Delivery[] = [];
  let wake: (() => void) | null = null;
  const stream: Stream = {
    actor,
    tokenKey,
    push(batch) {
      // A stream that does not read (a stalled client) holds at most this much before it is told to reload.
      if (queue.length + batch.length > BURST_MAX * 5) queue.splice(0, queue.length, { seq: batch[batch.length - 1]!.seq, event: { kind: 'resync' } });
      else queue.push(...batch);
      wake?.();
    },
  };
  const from = lastEventId ? Number(lastEventId) : null;
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  reader.register(stream);
  try {
    // A new stream starts at the log's end: what changed before it opened is in the page it is shown with.
    const startedAfter = from === null ? await logEnd() : null;
    await reader.start();
    if (from === null) yield [startedAfter ?? 0, { kind: 'live' }];
    if (from !== null) {
      const replay = (await readLog(from, REPLAY_MAX + 1)).filter((row) => sees(actor, row));
      const oldest = await db.plantChange.findFirst({ orderBy: { seq: 'asc' }, select: { seq: true } });
      const reachesBack = oldest ? oldest.seq <= from + 1 : from >= (reader.position ?? 0);
      if (replay.length > REPLAY_MAX || !reachesBack) {
        yield [Math.max(from, reader.position ?? 0), { kind: 'resync' }];
      } else {
        const replayed = new Set(replay.map((row) => row.seq));
        for (const row of replay) yield [row.seq, eventOf(row)];
        // What the reader handed out meanwhile and the replay already sent, once only.
        for (let index = queue.length - 1; index >= 0; index--) if (replayed.has(queue[index]!.seq)) queue.splice(index, 1);
      }
    }
    for (;;) {
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
      // Sent already, before the connection this stream resumes dropped.
      if (from !== null && next.event.kind !== 'resync' && next.seq <= from) continue;
      if (startedAfter !== null && next.seq <= startedAfter) continue;
      yield [next.seq, next.event];
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.remove(stream);
  }
}
