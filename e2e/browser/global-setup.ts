/**
 * Builds the app when needed (test-support/build.ts), starts it on a free port and a temporary SQLite
 * file, and hands the tests its address, the first admin's token and the database (E2E_BASE_URL,
 * E2E_ADMIN_TOKEN, E2E_DATABASE_URL). The returned function stops the server (SIGTERM to its own pid) and
 * keeps its log at test-results/e2e/server.log.
 *
 * With E2E_BASE_URL and E2E_ADMIN_TOKEN set already, no server is started: the tests run against that one
 * (tokens for other users then need E2E_DATABASE_URL for the token command).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot, startServer } from '@test-support/server-process';
import { ensureTestBuild } from '@test-support/build';

/**
 * Webhooks on, for receivers the tests start on loopback (http://127.0.0.1:port), with the retry schedule
 * shrunk 300-fold (first retry after 100 ms; the 24 hours of retries are 4.8 minutes, the 5 days before
 * disabling 24 minutes). The key is a fixed test value: it encrypts the signing secrets of this run's
 * throwaway database only.
 */
export const WEBHOOKS_ENV = {
  WEBHOOKS_SECRET_KEY: Buffer.alloc(32, 'plant-store-browser-tests').toString('base64'),
  WEBHOOKS_ALLOW_HTTP: '1',
  WEBHOOKS_ALLOW_PRIVATE: '1',
  WEBHOOKS_RETRY_BASE_MS: '100',
};

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.E2E_BASE_URL && process.env.E2E_ADMIN_TOKEN) {
    console.log(`[e2e] using the running server at ${process.env.E2E_BASE_URL}`);
    return async () => {};
  }
  ensureTestBuild();
  const server = await startServer({ env: WEBHOOKS_ENV });
  process.env.E2E_BASE_URL = server.baseUrl;
  process.env.E2E_ADMIN_TOKEN = server.adminToken;
  process.env.E2E_DATABASE_URL = server.databaseUrl;
  console.log(`[e2e] server ${server.baseUrl}, database ${server.databaseUrl}`);
  return async () => {
    const kept = path.join(projectRoot, 'test-results', 'e2e');
    mkdirSync(kept, { recursive: true });
    writeFileSync(path.join(kept, 'server.log'), server.log());
    await server.stop();
  };
}
