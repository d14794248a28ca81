import type { Role } from '@/generated/prisma/enums';

/**
 * What each role may do, by name. Code asks `can(actor, 'plants:any')` instead of comparing roles, so a
 * new role is one line here.
 */
const permissionsByRole = {
  admin: ['plants:own', 'plants:any', 'tokens:manage', 'webhooks:manage'],
  member: ['plants:own'],
} as const satisfies Record<Role, readonly string[]>;

export type Permission = (typeof permissionsByRole)[Role][number];

/** The signed-in user a request acts for. */
export type Actor = { userId: number; name: string; role: Role };

export function can(actor: Actor, permission: Permission): boolean {
  return (permissionsByRole[actor.role] as readonly Permission[]).includes(permission);
}
