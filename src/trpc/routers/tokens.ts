import { z } from 'zod';

import { issueToken, listTokens, revokeToken } from '@/server/auth/tokens';
import { AppError } from '@/server/errors';
import { createTRPCRouter, procedureNeeding } from '@/trpc/init';

const manageTokens = procedureNeeding('tokens:manage');

export const userNameSchema = z
  .string({ error: 'user name must be a string' })
  .trim()
  .min(1, { error: 'user name must not be empty' })
  .max(64, { error: 'user name must be at most 64 characters' })
  .regex(/^[\p{L}\p{N}._@-]+$/u, { error: 'user name may hold letters, digits and . _ @ - only' });

export const createTokenInput = z.strictObject({
  userName: userNameSchema,
  role: z.enum(['admin', 'member'], { error: 'role is admin or member' }),
});

/** Admin-only: the people and tokens behind the API. Never returns a token after it was created. */
export const tokensRouter = createTRPCRouter({
  list: manageTokens.query(() => listTokens()),

  create: manageTokens.input(createTokenInput).mutation(async ({ input }) => {
    const issued = await issueToken({ userName: input.userName, role: input.role });
    return { id: issued.id, token: issued.token, prefix: issued.prefix, userName: issued.user.name, role: issued.user.role };
  }),

  revoke: manageTokens.input(z.strictObject({ id: z.int().positive() })).mutation(async ({ input }) => {
    if (!(await revokeToken(input.id))) throw new AppError('tokenNotFound', `no token with id ${input.id}`, 'id');
  }),
});
