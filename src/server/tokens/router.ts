import { z } from 'zod';

import { createTokenInput, setRoleInput } from '@/shared/users';
import { countTokens, issueToken, listTokens, revokeToken, setRoleOfTokenUser } from '@/server/tokens/service';
import { AppError } from '@/shared/errors';
import { FIXED_COSTS, TOKENS_PER_UNIT } from '@/shared/limits';
import { createTRPCRouter, procedureNeeding } from '@/server/trpc/init';

const manageTokens = procedureNeeding('tokens:manage');

/**
 * Admin-only: the people and tokens behind the API. Never returns a token after it was created. The list shows
 * every token, charged one unit per TOKENS_PER_UNIT of them.
 */
export const tokensRouter = createTRPCRouter({
  /** `current` marks the token the caller signed in with, so the page can warn before revoking it. */
  list: manageTokens.declare({ cost: async () => 1 + Math.ceil((await countTokens()) / TOKENS_PER_UNIT), errors: {} }).query(async ({ ctx }) => {
    const tokens = await listTokens();
    const currentTokenId = ctx.auth.status === 'signedIn' ? ctx.auth.tokenId : undefined;
    const now = new Date();
    const working = (token: (typeof tokens)[number]) => token.revokedAt === null && (token.expiresAt === null || token.expiresAt > now);
    const workingAdminTokens = tokens.filter((token) => token.role === 'admin' && working(token));
    // The page explains why this one cannot be revoked (the server refuses it anyway: revokeToken).
    const lastAdminTokenId = workingAdminTokens.length === 1 ? workingAdminTokens[0]!.id : undefined;
    return tokens.map((token) => ({ ...token, current: token.id === currentTokenId, lastAdminToken: token.id === lastAdminTokenId }));
  }),

  create: manageTokens.input(createTokenInput).declare({ cost: FIXED_COSTS.issueToken, errors: {} }).mutation(async ({ input }) => {
    const expiresAt = input.expiresInDays === undefined ? undefined : new Date(Date.now() + input.expiresInDays * 86_400_000);
    const issued = await issueToken({ userName: input.userName, role: input.role, ...(expiresAt ? { expiresAt } : {}) });
    return { id: issued.id, token: issued.token, prefix: issued.prefix, userName: issued.user.name, role: issued.user.role, expiresAt: expiresAt ?? null };
  }),

  /** Makes the user of a token an admin or a member; the last admin with a working token stays one (lastAdmin). */
  setRole: manageTokens.input(setRoleInput).declare({ cost: FIXED_COSTS.setRole, errors: { tokenNotFound: true, lastAdmin: true } }).mutation(async ({ input }) => {
    const changed = await setRoleOfTokenUser(input.id, input.role);
    if (!changed) throw new AppError('tokenNotFound', `no token with id ${input.id}`, 'id');
    return changed;
  }),

  revoke: manageTokens.input(z.strictObject({ id: z.int().positive() })).declare({ cost: FIXED_COSTS.revokeToken, errors: { tokenNotFound: true, lastAdmin: true } }).mutation(async ({ input }) => {
    if (!(await revokeToken(input.id))) throw new AppError('tokenNotFound', `no token with id ${input.id}`, 'id');
  }),
});
