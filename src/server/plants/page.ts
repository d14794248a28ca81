import 'server-only';

import { can, type Actor } from '@/server/auth/permissions';
import { DEFAULT_SORT, type PlantPageInput, type PlantRow } from '@/shared/plants';

import { countBefore, countMatching, positionOf, positionOfRow, type RawRow, ready, selectFrom, toRow } from './query';

export type TablePage = {
  rows: PlantRow[];
  /** Plants that match the filters, on every page. */
  total: number;
  /** How many matching plants come before the first row (0 on the first page). */
  offset: number;
  /** The page that was served: a page whose cursor row is gone, or that ran empty, falls back to the first or last. */
  cursor: PlantPageInput['cursor'];
  /** When the page was read: "select all matching" means the plants that matched then (see bulkSelection). */
  asOf: Date;
};

/**
 * A page of the admin table, in any of its sorts: keyset paging on (sort key, id) in both directions, plus
 * the two counts that place it ("26–50 of 186"). The address names a page by a row id (`after=ID`); its
 * place in the order is read from that row. Every query walks an index in the sort's order; the counts are
 * the only part whose cost grows with the store (see docs/admin-page.md, "At scale").
 */
export async function pagePlants(actor: Actor, input: PlantPageInput): Promise<TablePage> {
  const { size, cursor, sort = DEFAULT_SORT, ...filters } = input;
  const asOf = new Date();
  await ready(filters, sort);
  const withOwner = can(actor, 'plants:any');
  const total = await countMatching(actor, filters);
  const lastPage = async () => (total === 0 ? [] : (await selectFrom(actor, filters, sort, { backwards: true, limit: total % size || size, withOwner })).reverse());
  const firstPage = () => selectFrom(actor, filters, sort, { limit: size, withOwner });

  let served = cursor;
  let rows: (RawRow & { segment: number })[];
  if (cursor?.kind === 'after' || cursor?.kind === 'before') {
    // By id the cursor is its own position, even once its row is gone; other orders read the row's key.
    const from = sort.key === 'id' ? { segment: 0, key: null, id: cursor.id } : await positionOf(actor, sort, cursor.id);
    if (from === null) {
      // The row that named the page is gone: its place in this order is unknown, so the first page.
      served = undefined;
      rows = await firstPage();
    } else if (cursor.kind === 'after') {
      rows = await selectFrom(actor, filters, sort, { from, limit: size, withOwner });
    } else {
      rows = (await selectFrom(actor, filters, sort, { from, backwards: true, limit: size, withOwner })).reverse();
    }
  } else if (cursor?.kind === 'last') {
    rows = await lastPage();
  } else {
    rows = await firstPage();
  }
  // The page's plants (or the row it was named by) were deleted or filtered away meanwhile: the nearest page that has some.
  if (rows.length === 0 && total > 0 && served) {
    served = served.kind === 'before' ? undefined : { kind: 'last' };
    rows = served ? await lastPage() : await firstPage();
  }
  const first = rows[0];
  const offset = first === undefined || served === undefined ? 0 : served.kind === 'last' ? Math.max(0, total - rows.length) : await countBefore(actor, filters, sort, positionOfRow(sort, first));
  return { rows: rows.map((row) => toRow(row, withOwner)), total, offset, cursor: served, asOf };
}
