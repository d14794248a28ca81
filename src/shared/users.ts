import { z } from 'zod';

/** The shapes of users and tokens: shared by the tokens router, the token command and the admin page. */

export const roleSchema = z.enum(['admin', 'member'], { error: 'role is admin or member' });

export const userNameSchema = z
  .string({ error: 'user name must be a string' })
  .trim()
  .min(1, { error: 'user name must not be empty' })
  .max(64, { error: 'user name must be at most 64 characters' })
  .regex(/^[\p{L}\p{N}._@-]+$/u, { error: 'user name may hold letters, digits and . _ @ - only' });

/** The longest a token may be made to last, in days (the token command's `--expires-in-days` and the page's field). */
export const TOKEN_EXPIRY_DAYS_MAX = 99_999;
export const tokenExpiryDaysSchema = z
  .int({ error: 'expiry is a whole number of days' })
  .min(1, { error: 'expiry is at least 1 day' })
  .max(TOKEN_EXPIRY_DAYS_MAX, { error: `expiry is at most ${TOKEN_EXPIRY_DAYS_MAX} days` });

/** A new token: its user (created when new), the role that user gets, and optionally the days it works (none: until revoked). */
export const createTokenInput = z.strictObject({ userName: userNameSchema, role: roleSchema, expiresInDays: tokenExpiryDaysSchema.optional() });

/** A role change: of the user the token `id` belongs to. */
export const setRoleInput = z.strictObject({ id: z.int().positive(), role: roleSchema });
