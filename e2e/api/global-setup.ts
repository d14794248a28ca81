import { startPrivatePostgres } from '@test-support/postgres';
import { ensureTestBuild } from '@test-support/build';

/**
 * Once per run of the integration suite: the production build the servers run, and under
 * TEST_DATABASE=postgresql a private PostgreSQL server (unless TEST_POSTGRES_URL names one), stopped and
 * deleted when the run ends. Test files start after this, so they inherit the URL through the environment.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  ensureTestBuild();
  if (process.env.TEST_DATABASE !== 'postgresql' || process.env.TEST_POSTGRES_URL) return undefined;
  const postgres = await startPrivatePostgres();
  process.env.TEST_POSTGRES_URL = postgres.url;
  console.log(`[e2e] private PostgreSQL on 127.0.0.1:${postgres.port} (${postgres.dataDir})`);
  return () => postgres.stop();
}
