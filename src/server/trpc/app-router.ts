import { createTRPCRouter, protectedProcedure } from '@/server/trpc/init';

import { plantsRouter } from '@/server/plants/router';
import { tokensRouter } from '@/server/tokens/router';
import { webhooksRouter } from '@/server/webhooks/router';

export const appRouter = createTRPCRouter({
  plants: plantsRouter,
  tokens: tokensRouter,
  webhooks: webhooksRouter,
  /** Who the token belongs to; the admin page signs in with it. */
  me: protectedProcedure.query(({ ctx }) => ({ name: ctx.actor.name, role: ctx.actor.role })),
});

export type AppRouter = typeof appRouter;
