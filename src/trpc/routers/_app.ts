import { createTRPCRouter, protectedProcedure } from '@/trpc/init';

import { plantsRouter } from './plants';

export const appRouter = createTRPCRouter({
  plants: plantsRouter,
  /** Who the token belongs to; the admin page signs in with it. */
  me: protectedProcedure.query(({ ctx }) => ({ name: ctx.actor.name, role: ctx.actor.role })),
});

export type AppRouter = typeof appRouter;
