import 'server-only';

import { Prisma } from '@/generated/prisma/client';
import { can, type Actor } from '@/server/auth/permissions';

/**
 * Which plants an actor may reach: members their own, admins every plant; everything else is "not found".
 * This is the one place that decides it. Every query of plant rows takes its access rule from here, as a
 * Prisma `where` or as an SQL condition on `p`, both derived from the one decision below, so no query can
 * forget it or spell it differently (plants/scope.test.ts fails on a plant query that does not).
 */
export type PlantScope = { readonly everyOwner: true } | { readonly everyOwner: false; readonly ownerId: number };

const EVERY_OWNER: PlantScope = { everyOwner: true };

export function plantScope(actor: Actor): PlantScope {
  return can(actor, 'plants:any') ? EVERY_OWNER : { everyOwner: false, ownerId: actor.userId };
}

/** The scope as a Prisma `where` on Plant, to spread into a query's own `where`. */
export function plantScopeWhere(actor: Actor): { ownerId?: number } {
  const scope = plantScope(actor);
  return scope.everyOwner ? {} : { ownerId: scope.ownerId };
}

/** The scope as SQL conditions on the plant rows `p` (none for every owner), to AND into a WHERE. */
export function plantScopeSql(actor: Actor): Prisma.Sql[] {
  const scope = plantScope(actor);
  return scope.everyOwner ? [] : [Prisma.sql`p."ownerId" = ${scope.ownerId}`];
}

/** Whether a row of some owner's plant (a log entry, a count) is within the scope. */
export function inPlantScope(actor: Actor, ownerId: number): boolean {
  const scope = plantScope(actor);
  return scope.everyOwner || scope.ownerId === ownerId;
}

/** Whether the actor sees every owner's plants (and so their owners, and the owner filter). */
export function seesEveryOwner(actor: Actor): boolean {
  return plantScope(actor).everyOwner;
}
