import { z } from 'zod';

/** The shapes of users and tokens: shared by the tokens router, the token command and the admin page. */

export const roleSchema = z.enum(['admin', 'member'], { error: 'role is admin or member' });

export const userNameSchema = z
  .string({ error: 'user name must be a string' })
  .trim()
  .min(1, { error: 'user name must not be empty' })
  .max(64, { error: 'user name must be at most 64 characters' })
  .regex(/^[\p{L}\p{N}._@-]+$/u, { error: 'user name may hold letters, digits and . _ @ - only' });

export const createTokenInput = z.strictObject({ userName: userNameSchema, role: roleSchema });
