import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { engine } from '@/server/db/client';
import { searchWalkBudget } from '@/shared/limits';
import { DEFAULT_SORT, lastPageRows, type PlantPage, type PlantPageInput, type PlantSort, type WalkKey, type WalkStop } from '@/shared/plant-table';

import { ready } from './conditions';
import { type Count, countBefore, countCapOf, countMatching } from './counts';
import { type KeysetPosition, positionOfKey, positionOfRow } from './keysets';
import { positionOf, toRow } from './rows';
import { type SelectedRow, selectWalked } from './walks';
import { seesEveryOwner } from './scope';

/** A page of the admin table (its schema, and what each field means: shared/plant-table.ts, plantPageOutput). */
export type TablePage = PlantPage;

/**
 * A page of the admin table, in any of its sorts: keyset paging on (sort key, id) in both directions, plus
 * the two counts that place it ("26–50 of 186"). The address names a page by a row id (`after=ID`); its
 * place in the order is read from that row. Every query walks an index in the sort's order (or, for a search
 * of few matches, sorts those few); the counts stop at a cap (counts.ts, Count), so a page costs about the
 * same at any size of the store (docs/admin-page.md, "At scale").
 */
export async function pagePlants(actor: Actor, input: PlantPageInput): Promise<TablePage> {
  const { size, cursor, sort = DEFAULT_SORT, counts = true, ...unplanned } = input;
  const asOf = new Date();
  const filters = await ready(unplanned);
  const withOwner = seesEveryOwner(actor);
  // Counted when a page needs it: a first page with room to spare holds every match, and is its own count
  // (a search of few matches then reads them once less: at 10 M on PostgreSQL, one plant's trigram scan is
  // ~100 ms each time).
  let counted: Count | undefined;
  // Rows only (`counts: false`): a total of none, "at least" (raised to the rows seen below), and no offset.
  const totalOf = async (): Promise<Count> => (counted ??= counts ? await countMatching(actor, filters) : { count: 0, exact: false });
  // Every read of rows walks at most the engine's budget (searchWalkBudget) of each segment where it tests names (walks.ts,
  // walksNames): a page whose walk stops there holds what it found, and says where it stopped.
  const read = (options: { from?: KeysetPosition; backwards?: boolean; limit: number; withOwner: boolean }) => selectWalked(actor, filters, sort, { ...options, walkBudget: searchWalkBudget(engine) });
  type Stop = { row: SelectedRow; direction: WalkStop['direction'] } | null;
  const backwards = async (options: { from?: KeysetPosition; limit: number }): Promise<{ rows: SelectedRow[]; stop: Stop }> => {
    const found = await read({ ...options, backwards: true, withOwner });
    return { rows: found.rows.reverse(), stop: found.stop ? { row: found.stop, direction: 'backwards' } : null };
  };
  // The last page holds what is left over after whole pages, when the total is known; else a whole page.
  const lastPage = async () => {
    const total = await totalOf();
    return total.count === 0 && total.exact ? { rows: [], stop: null } : await backwards({ limit: total.exact ? lastPageRows(total.count, size) : size });
  };
  // One row more than the page, to know whether another follows (or, when the walk stopped first, that more may).
  const forwards = async (from?: KeysetPosition): Promise<{ rows: SelectedRow[]; more: boolean; stop: Stop }> => {
    const found = await read({ from, limit: size + 1, withOwner });
    return { rows: found.rows.slice(0, size), more: found.rows.length > size || found.stop !== null, stop: found.stop ? { row: found.stop, direction: 'forwards' } : null };
  };

  let served = cursor;
  let rows: SelectedRow[];
  let more: boolean | undefined;
  let walkStop: Stop = null;
  if (cursor?.kind === 'after' || cursor?.kind === 'before') {
    // By id the cursor is its own position, even once its row is gone (a walk in id order that stopped goes on
    // from the id it stopped at); a cursor that goes on from where a walk stopped in another order carries the
    // place the server held (renamed or deleted since, the walk still goes on from there); other cursors read
    // the row's key.
    const from =
      sort.key === 'id'
        ? { segment: 0, key: null, id: cursor.id }
        : cursor.key !== undefined
          ? positionOfKey(sort, cursor.id, cursor.key)
          : await positionOf(actor, sort, cursor.id);
    if (from === null) {
      // The row that named the page is gone: its place in this order is unknown, so the first page.
      served = undefined;
      ({ rows, more, stop: walkStop } = await forwards());
    } else if (cursor.kind === 'after') {
      ({ rows, more, stop: walkStop } = await forwards(from));
    } else {
      ({ rows, stop: walkStop } = await backwards({ from, limit: size }));
    }
  } else if (cursor?.kind === 'last') {
    ({ rows, stop: walkStop } = await lastPage());
    more = false;
  } else {
    ({ rows, more, stop: walkStop } = await forwards());
  }
  // The page's plants (or the row it was named by) were deleted or filtered away meanwhile: the nearest page
  // that has some. Not a page its walk left empty: its place is known, and matches may lie past it.
  if (rows.length === 0 && served && !walkStop) {
    const total = await totalOf();
    if (total.count > 0 || !total.exact) {
      served = served.kind === 'before' ? undefined : { kind: 'last' };
      if (served) {
        ({ rows, stop: walkStop } = await lastPage());
        more = false;
      } else {
        ({ rows, more, stop: walkStop } = await forwards());
      }
    }
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  // The first page (no cursor, or its fallback) read one row more than it holds: none more means it holds them all.
  const total = served === undefined && more === false ? { count: rows.length, exact: true } : await totalOf();
  let offset: Count;
  if (served === undefined) offset = { count: 0, exact: true };
  else if (!counts) offset = { count: 0, exact: false };
  // A page its walk left empty stands where the walk stopped: no row between it and the page's cursor matched.
  else if (first === undefined) offset = walkStop ? await countBefore(actor, filters, sort, positionOfRow(sort, walkStop.row)) : { count: 0, exact: true };
  // The last page is placed by the total only when it holds what is left over; a walk that stopped may not.
  else if (served.kind === 'last' && total.exact && !walkStop) offset = { count: Math.max(0, total.count - rows.length), exact: true };
  else offset = await countBefore(actor, filters, sort, positionOfRow(sort, first), total);
  // A page read backwards: what follows its last row (the page it was turned from, unless that is gone), or for
  // a page its walk left empty, what follows where the walk stopped. A walk that stops before it finds one says
  // that more may follow.
  if (more === undefined) {
    const end = last ?? walkStop?.row;
    const after = end === undefined ? null : await read({ from: positionOfRow(sort, end), limit: 1, withOwner: false });
    more = after !== null && (after.rows.length > 0 || after.stop !== null);
  }
  // An inexact total may be a count of the rows a walk with a budget saw (counts.ts, countWhere), which need
  // not be the rows this page shows: never say "of 0+" beside 25 of them. At least the rows up to here, and
  // one more if another follows; past the cap, the cap ("10,000+") as everywhere else.
  const seen = Math.min(offset.count + rows.length + (more ? 1 : 0), countCapOf(filters));
  // A bulk change of "every matching plant" takes those created at or before asOf (bulk.ts); the clock counts
  // milliseconds, so a plant created after this answer in the same millisecond would join a selection its
  // user never saw. The answer leaves once the clock has moved past asOf (a wait only on a page read in
  // under a millisecond).
  while (Date.now() <= asOf.getTime()) await new Promise((resolve) => setTimeout(resolve, 1));
  return {
    rows: rows.map((row) => toRow(row, withOwner)),
    total: total.exact ? total.count : Math.max(total.count, seen),
    totalExact: total.exact,
    offset: offset.count,
    offsetExact: offset.exact,
    hasNext: more,
    cursor: served,
    asOf,
    walkStopped: walkStop ? { direction: walkStop.direction, id: BigInt(walkStop.row.id), key: walkKeyOf(sort, walkStop.row), reached: reachedText(sort, walkStop.row) } : null,
  };
}

/** A time as each engine's driver gives it: a Date, or SQLite's text (or a number of milliseconds). */
function timeOf(key: unknown): Date {
  return key instanceof Date ? key : new Date(typeof key === 'string' && !/^\d+$/.test(key) ? key : Number(key));
}

/** Where a walk stopped, as the next request sends it back (the cursor's `key`): the row's key, a creation time as a Date. */
function walkKeyOf(sort: PlantSort, row: SelectedRow): WalkKey {
  const key = row.sortKey;
  if (key === null || key === undefined) return null;
  return sort.key === 'created' ? timeOf(key) : String(key);
}

/** Where a walk stopped, as a person reads the order's key: a folded name, a tag, an owner, an ISO time, or in id order the id; null for untagged plants. */
function reachedText(sort: PlantSort, row: SelectedRow): string | null {
  if (sort.key === 'id') return String(row.id);
  const key = row.sortKey;
  if (key === null || key === undefined) return null;
  if (sort.key !== 'created') return String(key);
  const at = timeOf(key);
  return Number.isNaN(at.getTime()) ? String(key) : at.toISOString();
}
