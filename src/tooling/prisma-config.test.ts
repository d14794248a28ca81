/**
 * `npx prisma validate` as docs/commands.md ("`npx prisma …`") gives it, run as a user runs it in the project's
 * folder: with the default DATABASE_URL and with a PostgreSQL one (each engine's schema), and with no
 * PRISMA_SCHEMA_ENGINE_BINARY, so that it passes only where prisma.config.ts spares the CLI its engine download
 * (this machine, and CI, cannot download it). Studio, the other `npx prisma` command the docs give, is
 * e2e/browser/studio.spec.ts's.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { projectRoot } from '@/server/paths';
import { userEnv } from '@test-support/documented';

async function npxPrisma(args: string[], databaseUrl: string | undefined): Promise<string> {
  const env = userEnv({ CHECKPOINT_DISABLE: '1', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  if (!databaseUrl) delete env.DATABASE_URL;
  delete env.PRISMA_SCHEMA_ENGINE_BINARY;
  const { stdout, stderr } = await promisify(execFile)('npx', ['prisma', ...args], {
    cwd: projectRoot,
    env,
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(`npx prisma ${args.join(' ')} failed:\n${error.stdout}\n${error.stderr}`);
  });
  return `${stdout}${stderr}`;
}

describe('npx prisma validate, with the app\'s DATABASE_URL forms', () => {
  // The CLI loads in a few seconds; far longer on a busy machine.
  it('validates the schema of the URL\'s engine, offline', { timeout: 120_000 }, async () => {
    expect(await npxPrisma(['validate'], undefined)).toContain('The schema at prisma/schema.prisma is valid');
    expect(await npxPrisma(['validate'], 'postgresql://plants@127.0.0.1:1/plants')).toContain('The schema at prisma/postgresql/schema.prisma is valid');
  });
});
