/**
 * `npm start`: migrate, build when there is no production build, create the first admin on an empty
 * database, then serve with `next start` on PORT (default 3000). `--dev` serves with `next dev` instead.
 * SIGTERM and SIGINT are passed on to Next.js, and this process exits with it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { applyMigrations } from '../../prisma/migrate';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const nextBin = path.join(projectRoot, 'node_modules', 'next', 'dist', 'bin', 'next');
const dev = process.argv.includes('--dev');
const port = process.env.PORT ?? '3000';
const hostname = process.env.HOSTNAME_TO_BIND ?? '0.0.0.0';
const databaseUrl = process.env.DATABASE_URL ?? 'file:./data/plants.db';

async function createFirstAdmin(): Promise<void> {
  const { countUsers, issueToken } = await import('@/server/auth/tokens');
  if ((await countUsers()) > 0) return;
  const { token } = await issueToken({ userName: 'admin', role: 'admin' });
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
  const server = spawn(process.execPath, [nextBin, dev ? 'dev' : 'start', '--port', port, '--hostname', hostname], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.kill(signal));
  server.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
