import 'server-only';

import { setTimeout as sleep } from 'node:timers/promises';

import { holdStream } from '@/server/auth/held-streams';
import type { Actor } from '@/server/auth/permissions';
import { engine } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { CSV_BOM, csvRecord } from '@/shared/csv';
import { ROWS_PER_UNIT, searchWalkBudget } from '@/shared/limits';
import { PLANT_FIELD_NAMES, type PlantFilters } from '@/shared/plants';
import { DEFAULT_SORT, type PlantSort } from '@/shared/plant-table';

import { ready } from './conditions';
import { type KeysetPosition, positionOfRow } from './keysets';
import { selectWalked } from './walks';
import { seesEveryOwner } from './scope';

/** Rows read per query: what one export holds in memory at a time, besides the socket's buffer. */
export const EXPORT_BATCH = 1_000;
/**
 * Exports one token may have open at once, and one process. An open export holds a connection and a batch in
 * memory (1,000 rows of the longest names and tags are ~400 KB of CSV, and as much may wait in the socket's
 * buffer), so the process's 16 hold ~16 MB at most; a client that stops reading is cut off (http/stalled-stream.ts), so a slow
 * one cannot keep its place for long, and one token never holds more than one of them.
 */
export const EXPORTS_PER_TOKEN = 1;
export const EXPORTS_OPEN_MAX = 16;
/**
 * Exports reading the database at once. A batch takes a turn for its read only, never while its rows are being
 * sent or its token's bucket refills, so exports whose clients read slowly (or not at all) hold no turn, and
 * turns go first come, first served: an export waits for at most the reads queued before it, one per other open
 * export.
 */
export const EXPORT_READS_AT_ONCE = 4;

const open = new Map<string, number>();
let openTotal = 0;

/**
 * Claims a place for an export, before anything is written (so a refusal can still be a 429), and gives
 * it back when the export ends. Streaming the whole store is the most expensive thing a token can ask for.
 */
export function claimExport(tokenKey: string): () => void {
  if ((open.get(tokenKey) ?? 0) >= EXPORTS_PER_TOKEN) {
    throw new AppError('tooManyRequests', 'an export for this token is still running; wait for it to finish');
  }
  if (openTotal >= EXPORTS_OPEN_MAX) throw new AppError('tooManyRequests', 'this server is busy with other exports; try again in a few seconds');
  open.set(tokenKey, (open.get(tokenKey) ?? 0) + 1);
  openTotal += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    openTotal -= 1;
    const left = open.get(tokenKey)! - 1;
    if (left === 0) open.delete(tokenKey);
    else open.set(tokenKey, left);
  };
}

const waitingForRead: (() => void)[] = [];
let reading = 0;

/** A turn to read one batch, first come, first served; the release hands it to the next in line. */
async function readTurn(): Promise<() => void> {
  if (reading < EXPORT_READS_AT_ONCE) reading += 1;
  else await new Promise<void>((resolve) => waitingForRead.push(resolve));
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = waitingForRead.shift();
    if (next) next();
    else reading -= 1;
  };
}

/**
 * Every plant of the view as CSV, in the view's order: the filters and sort of the table, keyset batches of
 * EXPORT_BATCH rows (a deep batch costs what the first one does), each charged to the token's bucket as a
 * list of as many rows is (ROWS_PER_UNIT); a batch the bucket cannot pay yet waits for it, so a large export
 * is slowed to the token's rate rather than cut off half-written. `takeUnits` answers the wait when refused.
 * Ids are written as the database holds them (exact int64); owner and creation time for admins, as in the
 * table. Text is made safe for spreadsheets (shared/csv.ts).
 */
export async function* plantsCsv(
  actor: Actor,
  takeUnits: (units: number) => { retryAfterMs: number } | undefined | Promise<{ retryAfterMs: number } | undefined>,
  input: PlantFilters & { sort?: PlantSort },
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const { sort = DEFAULT_SORT, ...unplanned } = input;
  const filters = await ready(unplanned);
  const withOwner = seesEveryOwner(actor);
  // Sent with the first batch, once its query has run: a refusal of the filters (a member's owner filter) comes
  // before the file's first byte, so it is still the contract's JSON error.
  let header: string | undefined = CSV_BOM + csvRecord(['id', ...PLANT_FIELD_NAMES, ...(withOwner ? ['owner', 'created'] : [])]);
  let from: KeysetPosition | undefined;
  for (;;) {
    for (let refused = await takeUnits(EXPORT_BATCH / ROWS_PER_UNIT); refused; refused = await takeUnits(EXPORT_BATCH / ROWS_PER_UNIT)) {
      // Ended at once by an abort (the client left, its token's access ended), not at the end of the wait.
      await sleep(Math.max(10, refused.retryAfterMs), undefined, { signal });
    }
    // Batches a stopped walk left empty write nothing, so the door's check between chunks would not see a client
    // that went away: each batch looks first.
    if (signal?.aborted) throw signal.reason;
    // A search of many matches walks at most the engine's walk budget of rows a batch (walks.ts, walksNames): a
    // batch whose walk stops writes what it found (maybe nothing) and the next goes on from the row it stopped at
    // (no row between matched), so no one statement walks the caller's whole view; the rows written are the same.
    const endTurn = await readTurn();
    let batch: Awaited<ReturnType<typeof selectWalked>>;
    try {
      batch = await selectWalked(actor, filters, sort, { from, limit: EXPORT_BATCH, withOwner, walkBudget: searchWalkBudget(engine) });
    } finally {
      endTurn();
    }
    const { rows, stop } = batch;
    let chunk = header ?? '';
    header = undefined;
    if (rows.length === 0 && stop === null) {
      if (chunk !== '') yield chunk;
      return;
    }
    for (const row of rows) {
      const fields: (string | { raw: string })[] = [{ raw: BigInt(row.id).toString() }, ...PLANT_FIELD_NAMES.map((field) => row[field] ?? '')];
      if (withOwner) fields.push(row.owner ?? '', { raw: new Date(row.createdAt!).toISOString() });
      chunk += csvRecord(fields);
    }
    if (chunk !== '') yield chunk;
    if (stop) {
      from = positionOfRow(sort, stop);
      continue;
    }
    if (rows.length < EXPORT_BATCH) return;
    from = positionOfRow(sort, rows[rows.length - 1]!);
  }
}

/** Seconds a refused export is told to wait: about what a running export of a few batches takes. */
const CLAIM_RETRY_AFTER_S = 5;

/**
 * The export as its procedure answers it (plants.export): `plantsCsv`, holding its place among the open exports
 * from its first chunk to its end, and cut off (`signal`, or its token's access ending: auth/held-streams.ts)
 * wherever that was decided. Nothing is claimed before the first chunk is asked for, so a HEAD, or a caller that
 * never reads, holds nothing. A refused claim sets its `Retry-After`.
 */
export async function* exportFile(
  caller: { tokenId: number; actor: Actor; headers: (headers: Record<string, string>) => void },
  takeUnits: Parameters<typeof plantsCsv>[1],
  input: PlantFilters & { sort?: PlantSort },
  signal: AbortSignal | undefined,
): AsyncGenerator<string> {
  let release: () => void;
  try {
    release = claimExport(String(caller.tokenId));
  } catch (error) {
    caller.headers({ 'Retry-After': String(CLAIM_RETRY_AFTER_S) });
    throw error;
  }
  const accessEnded = new AbortController();
  const unhold = holdStream({ tokenId: caller.tokenId, actor: caller.actor, end: () => accessEnded.abort(new Error("the token's access ended")) });
  try {
    yield* plantsCsv(caller.actor, takeUnits, input, signal ? AbortSignal.any([signal, accessEnded.signal]) : accessEnded.signal);
  } finally {
    unhold();
    release();
  }
}
