import type { AddressInfo } from 'node:net';

import { createFront } from '@/server/http/front';
import { startHttpServer } from '@/server/http/server';
import type { Logger } from '@/server/log';

/**
 * The front over real HTTP in the test's own process, on a free port, over `router` and the unit database, with
 * no rate limits and no pages: for unit tests that reach inside (a router made for the test, a recorded log).
 */
export async function serveInProcess(router: Parameters<typeof createFront>[0]['router'], log: Logger): Promise<{ base: string; close: () => Promise<void> }> {
  const front = createFront({
    router,
    log,
    checkHealth: async () => {},
    pages: async (_request, response) => {
      response.statusCode = 404;
      response.end();
    },
    config: { RATE_LIMIT_PER_TOKEN: null, RATE_LIMIT_AUTH_FAILURES: null, TRUST_PROXY: null, CORS_ALLOWED_ORIGINS: null, PUBLIC_URL: undefined },
  });
  const running = await startHttpServer(front, { port: 0, hostname: '127.0.0.1', maxConnections: 100, maxConnectionsPerAddress: 1000, trustProxy: null, log });
  return { base: `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`, close: () => running.close() };
}
