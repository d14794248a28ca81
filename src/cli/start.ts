/**
 * `npm start`: migrate, build when there is no production build, create the first admin on an empty
 * database, then serve on PORT (default 3000). `--dev` serves Next.js in development mode instead.
 * SIGTERM and SIGINT stop accepting connections, let the requests in flight finish, then exit.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { applyMigrations } from '@/server/db/migrate';
import { DEFAULT_DATABASE_URL } from '@/server/db/database-url';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const nextBin = path.join(projectRoot, 'node_modules', 'next', 'dist', 'bin', 'next');
const dev = process.argv.includes('--dev');
const port = process.env.PORT ?? '3000';
const hostname = process.env.HOSTNAME_TO_BIND ?? '0.0.0.0';
const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
// Next.js and React pick their production code paths from NODE_ENV, as `next start` would set it.
Object.assign(process.env, { NODE_ENV: process.env.NODE_ENV ?? (dev ? 'development' : 'production'), DATABASE_URL: databaseUrl });

async function createFirstAdmin(): Promise<void> {
  const { issueFirstAdminToken } = await import('@/server/tokens/service');
  const issued = await issueFirstAdminToken();
  if (!issued) return;
  const { token } = issued;
  const publicUrl = process.env.PUBLIC_URL ?? `http://localhost:${port}`;
  console.log(
    [
      '',
      'Plant Store created its first user, "admin". Its token is shown this once; keep it somewhere safe:',
      '',
      `  ${token}`,
      '',
      `Sign in at ${publicUrl}/ with it, or call the API: curl -H "Authorization: Bearer ${token}" ${publicUrl}/api/plants`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  await applyMigrations({ databaseUrl });
  if (!dev && !existsSync(path.join(projectRoot, process.env.NEXT_DIST_DIR ?? '.next', 'BUILD_ID'))) {
    console.log('No production build yet: building (a minute or two, once).');
    const build = spawnSync(process.execPath, [nextBin, 'build'], { cwd: projectRoot, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  await createFirstAdmin();
  const { logger } = await import('@/server/log');
  // A promise a library forgot to handle is logged, not allowed to take every request down with it.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled promise rejection'));
  await (await import('@/server/db/client')).databaseReady;
  const { startHttpServer } = await import('@/server/http/server');
  const server = await startHttpServer({ projectRoot, dev, port: Number(port), hostname });
  console.log(`Plant Store is serving on http://${hostname}:${port} (${dev ? 'development' : 'production'})`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, async () => {
      console.log(`${signal}: finishing the requests in flight, then stopping`);
      await server.close();
      const { db } = await import('@/server/db/client');
      await db.$disconnect();
      process.exit(0);
    });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
