import { createTRPCRouter, protectedProcedure } from '@/trpc/init';

import { plantsRouter } from './plants';
import { tokensRouter } from './tokens';

export const appRouter = createTRPCRouter({
  plants: plantsRouter,
  tokens: tokensRouter,
  /** Who the token belongs to; the admin page signs in with it. */
  me: protectedProcedure.query(({ ctx }) => ({ name: ctx.actor.name, role: ctx.actor.role })),
});

export type AppRouter = typeof appRouter;
