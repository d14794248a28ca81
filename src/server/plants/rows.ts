import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { PLANT_FIELD_NAMES, type StoredFields, toPlant } from '@/shared/plants';
import { type PlantRow, type PlantSort } from '@/shared/plant-table';

import { conditions, whereOf } from './conditions';
import { type KeysetPosition, type Segment, segmentOfRow, segmentsOf } from './keysets';

/** Plant rows as reads select them: the plant's own columns, the admin page's owner, creation time and sort key. */

/** A row as selected: the plant's own columns, its owner and creation time, and its sort key. */
export type RawRow = { id: bigint | number | string } & StoredFields & { createdAt?: Date | string; owner?: string; sortKey?: unknown };

export function toRow(raw: RawRow, withOwner: boolean): PlantRow {
  const plant = toPlant({ ...raw, id: BigInt(raw.id) });
  return withOwner ? { ...plant, owner: raw.owner!, createdAt: new Date(raw.createdAt!) } : plant;
}

/** The plant's own columns: id and the declared fields (plain identifiers, checked in shared/plants.ts). */
const OWN_COLUMNS = Prisma.raw(['id', ...PLANT_FIELD_NAMES].map((column) => `p."${column}"`).join(', '));
// The plant's own columns need no join: the REST list, the API's hottest read, and a member's table.
export const PLANT_COLUMNS = Prisma.sql`SELECT ${OWN_COLUMNS}`;
export const OWNER_JOIN = Prisma.sql`JOIN "User" o ON o.id = p."ownerId"`;

/** The SELECT of the admin page's rows: with owner and creation time for admins, and the sort key. */
// plant scope: a SELECT … FROM, whose WHERE its callers (selectFrom, positionOf) take from conditions().
export function rowSelect(withOwner: boolean, segment: Segment, from: Prisma.Sql = Prisma.sql`"Plant" p`): Prisma.Sql {
  const key = segment.key ? Prisma.sql`, ${segment.key} AS "sortKey"` : Prisma.empty;
  const joined = withOwner || segment.keyColumn === 'owner';
  const owner = withOwner ? Prisma.sql`, p."createdAt" AS "createdAt", o.name AS owner` : Prisma.empty;
  return Prisma.sql`SELECT ${OWN_COLUMNS}${owner}${key} FROM ${from} ${joined ? OWNER_JOIN : Prisma.empty}`;
}

/** Where a row stands in an order, read from the database (its key as stored); null when it is gone or not the caller's. */
export async function positionOf(actor: Actor, sort: PlantSort, id: bigint): Promise<KeysetPosition | null> {
  const segment = segmentsOf(sort)[0]!;
  const where = [...conditions(actor, {}), Prisma.sql`p.id = ${id}`];
  const [row] = await db.$queryRaw<RawRow[]>`${rowSelect(false, segment)} ${whereOf(where)}`;
  if (!row) return null;
  const index = segmentOfRow(sort, row);
  return { segment: index, key: index === 0 ? row.sortKey : null, id };
}
