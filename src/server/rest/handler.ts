import 'server-only';

import { db } from '@/server/db/client';
import { logger } from '@/server/log';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

import { createRestEdge } from './edge';
import { policyFromEnvironment } from './rate-limit';

function corsFromEnvironment(value: string | undefined) {
  const origins = (value ?? '').split(',').map((origin) => origin.trim()).filter(Boolean);
  if (origins.length === 0) return undefined;
  return { allowedOrigins: origins.includes('*') ? ('*' as const) : origins };
}

/** The REST door of this app: the edge over the app's router, configured from the environment. */
export const handleRestRequest = createRestEdge({
  router: appRouter,
  createContext,
  log: logger,
  checkHealth: async () => {
    await db.$queryRaw`SELECT 1`;
    return true;
  },
  rateLimits: {
    // Far above what a person or the admin page does; a runaway script meets it.
    perToken: policyFromEnvironment(process.env.RATE_LIMIT_PER_TOKEN, { burst: 600, perSecond: 100 }),
    authFailuresPerAddress: policyFromEnvironment(process.env.RATE_LIMIT_AUTH_FAILURES, { burst: 60, perSecond: 1 }),
  },
  cors: corsFromEnvironment(process.env.CORS_ALLOWED_ORIGINS),
  trustProxy: process.env.TRUST_PROXY === '1',
});
