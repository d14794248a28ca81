/**
 * Builds the app when needed (e2e/support/test-build.ts), starts it on a free port and a temporary SQLite
 * file, and hands the tests its address, the first admin's token and the database (E2E_BASE_URL,
 * E2E_ADMIN_TOKEN, E2E_DATABASE_URL). The returned function stops the server (SIGTERM to its own pid) and
 * keeps its log at test-results/e2e/server.log.
 *
 * With E2E_BASE_URL and E2E_ADMIN_TOKEN set already, no server is started: the tests run against that one
 * (tokens for other users then need E2E_DATABASE_URL for the token command).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot, startServer } from '../support/server-process';
import { ensureTestBuild } from '../support/build';

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.E2E_BASE_URL && process.env.E2E_ADMIN_TOKEN) {
    console.log(`[e2e] using the running server at ${process.env.E2E_BASE_URL}`);
    return async () => {};
  }
  ensureTestBuild();
  const server = await startServer();
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
