import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { engine } from '@/server/db/client';
import { AppError } from '@/shared/errors';
import { CSV_BOM, csvRecord } from '@/shared/csv';
import { ROWS_PER_UNIT, searchWalkBudget } from '@/shared/limits';
import { DEFAULT_SORT, PLANT_FIELD_NAMES, type PlantFilters, type PlantSort } from '@/shared/plants';

import { type KeysetPosition, positionOfRow, ready, selectWalked } from './query';
import { seesEveryOwner } from './scope';

/** Rows read per query: what one export holds in memory at a time, besides the socket's buffer. */
export const EXPORT_BATCH = 1_000;
/** Exports one token may run at once, and one process. */
export const EXPORTS_PER_TOKEN = 1;
export const EXPORTS_MAX = 4;

const running = new Map<string, number>();
let runningTotal = 0;

/**
 * Claims a place for an export, before anything is written (so a refusal can still be a 429), and gives
 * it back when the export ends. Streaming the whole store is the most expensive thing a token can ask for.
 */
export function claimExport(tokenKey: string): () => void {
  if ((running.get(tokenKey) ?? 0) >= EXPORTS_PER_TOKEN) {
    throw new AppError('tooManyRequests', 'an export for this token is still running; wait for it to finish');
  }
  if (runningTotal >= EXPORTS_MAX) throw new AppError('tooManyRequests', 'this server is busy with other exports; try again in a few seconds');
  running.set(tokenKey, (running.get(tokenKey) ?? 0) + 1);
  runningTotal += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    runningTotal -= 1;
    const left = running.get(tokenKey)! - 1;
    if (left === 0) running.delete(tokenKey);
    else running.set(tokenKey, left);
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
  takeUnits: (units: number) => { retryAfterMs: number } | undefined,
  input: PlantFilters & { sort?: PlantSort },
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const { sort = DEFAULT_SORT, ...unplanned } = input;
  const filters = await ready(unplanned);
  const withOwner = seesEveryOwner(actor);
  yield CSV_BOM + csvRecord(['id', ...PLANT_FIELD_NAMES, ...(withOwner ? ['owner', 'created'] : [])]);
  let from: KeysetPosition | undefined;
  for (;;) {
    for (let refused = takeUnits(EXPORT_BATCH / ROWS_PER_UNIT); refused; refused = takeUnits(EXPORT_BATCH / ROWS_PER_UNIT)) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(10, refused!.retryAfterMs)));
      if (signal?.aborted) throw signal.reason;
    }
    // Batches a stopped walk left empty write nothing, so the door's check between chunks would not see a client
    // that went away: each batch looks first.
    if (signal?.aborted) throw signal.reason;
    // A search of many matches walks at most the engine's walk budget of rows a batch (query.ts, walksNames): a
    // batch whose walk stops writes what it found (maybe nothing) and the next goes on from the row it stopped at
    // (no row between matched), so no one statement walks the caller's whole view; the rows written are the same.
    const { rows, stop } = await selectWalked(actor, filters, sort, { from, limit: EXPORT_BATCH, withOwner, walkBudget: searchWalkBudget(engine) });
    if (rows.length === 0 && stop === null) return;
    let chunk = '';
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
