import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { PlantSort } from '@/shared/plant-table';

/**
 * The admin page's orders as keysets: each sort as segments walked by an index in both directions, a place in an
 * order, and the SQL that orders by it and goes past it. Shared by the page, the counts and the export.
 */

/**
 * An order as segments: the rows of one segment all come before those of the next, and within a segment
 * they go by (key, id). One segment for most keys; the tag sort has two, tagged plants by (folded tag, id) then
 * untagged ones by id, because NULLs sort first on SQLite and last on PostgreSQL and neither engine walks
 * an index for `NULLS LAST` on the other's side. Every segment is walked by an index in both directions.
 */
export type Segment = { only: Prisma.Sql | null; key: Prisma.Sql | null; keyColumn: string | null };

const ID_ONLY: Segment[] = [{ only: null, key: null, keyColumn: null }];
const SEGMENTS: Record<PlantSort['key'], Segment[]> = {
  id: ID_ONLY,
  name: [{ only: null, key: Prisma.sql`p."nameFolded"`, keyColumn: 'nameFolded' }],
  created: [{ only: null, key: Prisma.sql`p."createdAt"`, keyColumn: 'createdAt' }],
  owner: [{ only: null, key: Prisma.sql`o.name`, keyColumn: 'owner' }],
  tag: [
    // By the folded tag (any case together: "aquatic", "Tropical", "tropical", "Zebra"), kept by the database
    // beside the tag and null exactly when it is (migration *_plant_tag_fold).
    { only: Prisma.sql`p."tagFolded" IS NOT NULL`, key: Prisma.sql`p."tagFolded"`, keyColumn: 'tagFolded' },
    { only: Prisma.sql`p."tagFolded" IS NULL`, key: null, keyColumn: null },
  ],
};

export function segmentsOf(sort: PlantSort): Segment[] {
  return SEGMENTS[sort.key];
}

/** Which segment a row belongs to (only the tag sort has more than one). */
export function segmentOfRow(sort: PlantSort, row: { tag?: string | null }): number {
  return sort.key === 'tag' && (row.tag === null || row.tag === undefined) ? 1 : 0;
}

/** A position in an order: a row's segment, its key as the database holds it, and its id. */
export type KeysetPosition = { segment: number; key: unknown; id: bigint };

export const ASC = Prisma.sql`ASC`;
export const DESC = Prisma.sql`DESC`;

/** The plant id a query orders and pages by, unless SQLite's index plan orders by its match's (conditions.ts, idColumn). */
export const P_ID = Prisma.sql`p.id`;

/** `ORDER BY` of one segment, forwards (the sort's own direction) or backwards. */
export function orderBy(segment: Segment, descending: boolean, id: Prisma.Sql = P_ID): Prisma.Sql {
  const direction = descending ? DESC : ASC;
  return segment.key ? Prisma.sql`ORDER BY ${segment.key} ${direction}, p.id ${direction}` : Prisma.sql`ORDER BY ${id} ${direction}`;
}

/** Rows strictly past `position` in the walking direction (within the position's own segment). */
export function pastCondition(segment: Segment, position: KeysetPosition, descending: boolean, id: Prisma.Sql = P_ID): Prisma.Sql {
  if (!segment.key) return descending ? Prisma.sql`${id} < ${position.id}` : Prisma.sql`${id} > ${position.id}`;
  return descending ? Prisma.sql`(${segment.key}, p.id) < (${position.key}, ${position.id})` : Prisma.sql`(${segment.key}, p.id) > (${position.key}, ${position.id})`;
}

/**
 * A place in an order as a cursor carries it (the key a walk stopped at, checked against the sort by the input
 * schema): the tag sort's untagged plants are its second segment, by id alone.
 */
export function positionOfKey(sort: PlantSort, id: bigint, key: unknown): KeysetPosition {
  const segment = sort.key === 'tag' && key === null ? 1 : 0;
  return { segment, key: segment === 0 ? key : null, id };
}

export function positionOfRow(sort: PlantSort, row: { id: bigint | number | string; sortKey?: unknown; segment: number }): KeysetPosition {
  return { segment: row.segment, key: row.sortKey ?? null, id: BigInt(row.id) };
}
