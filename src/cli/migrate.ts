/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (either engine), then exits. */
import { DEFAULT_DATABASE_URL } from '@/server/db/database-url';
import { applyMigrations } from '@/server/db/migrate';

try {
  await applyMigrations({ databaseUrl: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL });
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
