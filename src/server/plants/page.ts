import 'server-only';

import type { Actor } from '@/server/auth/permissions';
import { DEFAULT_SORT, type PlantPageInput, type PlantRow } from '@/shared/plants';

import { type Count, countBefore, countCapOf, countMatching, type KeysetPosition, positionOf, positionOfRow, type RawRow, ready, selectFrom, toRow } from './query';
import { seesEveryOwner } from './scope';

export type TablePage = {
  rows: PlantRow[];
  /** Plants that match the filters, on every page: exactly when `totalExact`, else at least this many ("10,000+"). */
  total: number;
  totalExact: boolean;
  /** How many matching plants come before the first row (0 on the first page): exactly when `offsetExact`, else at least this many. */
  offset: number;
  offsetExact: boolean;
  /** Whether matching plants come after the last row (the next and last pages have rows). */
  hasNext: boolean;
  /** The page that was served: a page whose cursor row is gone, or that ran empty, falls back to the first or last. */
  cursor: PlantPageInput['cursor'];
  /** When the page was read: "select all matching" means the plants that matched then (see bulkSelection). */
  asOf: Date;
};

/**
 * A page of the admin table, in any of its sorts: keyset paging on (sort key, id) in both directions, plus
 * the two counts that place it ("26–50 of 186"). The address names a page by a row id (`after=ID`); its
 * place in the order is read from that row. Every query walks an index in the sort's order (or, for a search
 * of few matches, sorts those few); the counts stop at a cap (query.ts, Count), so a page costs about the
 * same at any size of the store (docs/admin-page.md, "At scale").
 */
export async function pagePlants(actor: Actor, input: PlantPageInput): Promise<TablePage> {
  const { size, cursor, sort = DEFAULT_SORT, ...unplanned } = input;
  const asOf = new Date();
  const filters = await ready(unplanned, sort);
  const withOwner = seesEveryOwner(actor);
  // Counted when a page needs it: a first page with room to spare holds every match, and is its own count
  // (a search of few matches then reads them once less: at 10 M on PostgreSQL, one plant's trigram scan is
  // ~100 ms each time).
  let counted: Count | undefined;
  const totalOf = async (): Promise<Count> => (counted ??= await countMatching(actor, filters));
  // The last page holds what is left over after whole pages, when the total is known; else a whole page.
  const lastPage = async () => {
    const total = await totalOf();
    return total.count === 0 && total.exact ? [] : (await selectFrom(actor, filters, sort, { backwards: true, limit: total.exact ? total.count % size || size : size, withOwner })).reverse();
  };
  // One row more than the page, to know whether another follows.
  const forwards = async (from?: KeysetPosition) => {
    const found = await selectFrom(actor, filters, sort, { from, limit: size + 1, withOwner });
    return { rows: found.slice(0, size), more: found.length > size };
  };

  let served = cursor;
  let rows: (RawRow & { segment: number })[];
  let more: boolean | undefined;
  if (cursor?.kind === 'after' || cursor?.kind === 'before') {
    // By id the cursor is its own position, even once its row is gone; other orders read the row's key.
    const from = sort.key === 'id' ? { segment: 0, key: null, id: cursor.id } : await positionOf(actor, sort, cursor.id);
    if (from === null) {
      // The row that named the page is gone: its place in this order is unknown, so the first page.
      served = undefined;
      ({ rows, more } = await forwards());
    } else if (cursor.kind === 'after') {
      ({ rows, more } = await forwards(from));
    } else {
      rows = (await selectFrom(actor, filters, sort, { from, backwards: true, limit: size, withOwner })).reverse();
    }
  } else if (cursor?.kind === 'last') {
    rows = await lastPage();
    more = false;
  } else {
    ({ rows, more } = await forwards());
  }
  // The page's plants (or the row it was named by) were deleted or filtered away meanwhile: the nearest page that has some.
  if (rows.length === 0 && served) {
    const total = await totalOf();
    if (total.count > 0 || !total.exact) {
      served = served.kind === 'before' ? undefined : { kind: 'last' };
      if (served) {
        rows = await lastPage();
        more = false;
      } else {
        ({ rows, more } = await forwards());
      }
    }
  }
  const first = rows[0];
  const last = rows[rows.length - 1];
  // The first page (no cursor, or its fallback) read one row more than it holds: none more means it holds them all.
  const total = served === undefined && more === false ? { count: rows.length, exact: true } : await totalOf();
  let offset: Count;
  if (first === undefined || served === undefined) offset = { count: 0, exact: true };
  else if (served.kind === 'last' && total.exact) offset = { count: Math.max(0, total.count - rows.length), exact: true };
  else offset = await countBefore(actor, filters, sort, positionOfRow(sort, first));
  // A page read backwards: what follows its last row (the page it was turned from, unless that is gone).
  more ??= last !== undefined && (await selectFrom(actor, filters, sort, { from: positionOfRow(sort, last), limit: 1, withOwner: false })).length > 0;
  // An inexact total may be a count of the rows a walk with a budget saw (query.ts, countWhere), which need
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
  };
}
