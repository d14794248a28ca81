import { onPlantsCommitted } from '@/server/plants/events';
import { plantsRouter } from '@/server/plants/router';
import { tokensRouter } from '@/server/tokens/router';
import { createTRPCRouter, protectedProcedure } from '@/server/trpc/init';
import { changeCommitted } from '@/server/webhooks/outbox';
import { webhooksRouter } from '@/server/webhooks/router';

/*
 * The composition root of the features: the one file that knows them all, above the tRPC base (which knows
 * none). Features do not import each other; where one must hear another, it is wired here.
 */

// A committed create, delete or restore may have queued webhook deliveries (the outbox triggers): wake the sender.
onPlantsCommitted((commit) => {
  if (commit.outboxEvents) changeCommitted();
});

export const appRouter = createTRPCRouter({
  plants: plantsRouter,
  tokens: tokensRouter,
  webhooks: webhooksRouter,
  /** Who the token belongs to; the admin page signs in with it. */
  me: protectedProcedure.declare({ cost: 1, errors: {} }).query(({ ctx }) => ({ name: ctx.actor.name, role: ctx.actor.role })),
});

export type AppRouter = typeof appRouter;
