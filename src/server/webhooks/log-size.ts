import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { db } from '@/server/db/client';
import { DELIVERY_ROWS_COUNTED_PER_UNIT, DELIVERY_ROWS_DELETED_PER_UNIT } from '@/shared/limits';
import { DELIVERY_STATUSES } from '@/shared/webhooks';

type Status = (typeof DELIVERY_STATUSES)[number];

/**
 * How many delivery rows a read or a delete of the delivery log may touch, at most, found out before it runs
 * (webhooks/router.ts declares the costs from it): the rows of a state of an endpoint lie between that state's
 * first and last id, two index seeks whatever the log's length. Ids interleave across endpoints and states, so
 * this is an upper bound, not a count.
 */
async function rowsBetween(where: Prisma.Sql): Promise<number> {
  const [bounds] = await db.$queryRaw<[{ first: number | bigint | null; last: number | bigint | null }]>`
    SELECT (SELECT id FROM "WebhookDelivery" ${where} ORDER BY id ASC LIMIT 1) AS first,
           (SELECT id FROM "WebhookDelivery" ${where} ORDER BY id DESC LIMIT 1) AS last`;
  return bounds.first === null || bounds.last === null ? 0 : Number(bounds.last) - Number(bounds.first) + 1;
}

/** An endpoint's rows in these states (its whole log when none are named), or every endpoint's whole log. */
async function logRows(endpointId: number | undefined, statuses?: readonly Status[]): Promise<number> {
  if (endpointId === undefined) return rowsBetween(Prisma.empty);
  if (statuses === undefined) return rowsBetween(Prisma.sql`WHERE "endpointId" = ${endpointId}`);
  const each = await Promise.all(statuses.map((status) => rowsBetween(Prisma.sql`WHERE "endpointId" = ${endpointId} AND status = ${status}`)));
  return each.reduce((sum, rows) => sum + rows, 0);
}

/** A read that counts an endpoint's deliveries in these states (or every endpoint's): one unit, and one per DELIVERY_ROWS_COUNTED_PER_UNIT rows. */
export async function countingCost(endpointId: number | undefined, statuses: readonly Status[]): Promise<number> {
  return 1 + Math.ceil((await logRows(endpointId, statuses)) / DELIVERY_ROWS_COUNTED_PER_UNIT);
}

/** Deleting an endpoint with its log: one unit, and one per DELIVERY_ROWS_DELETED_PER_UNIT rows of it. */
export async function deletingCost(endpointId: number): Promise<number> {
  return 1 + Math.ceil((await logRows(endpointId)) / DELIVERY_ROWS_DELETED_PER_UNIT);
}
