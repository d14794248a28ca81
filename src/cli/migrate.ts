/** `npm run db:migrate`: applies pending migrations to DATABASE_URL (either engine), then exits. */
import { config } from '@/server/config';
import { applyMigrations } from '@/server/db/migrate';

try {
  await applyMigrations({ databaseUrl: config().DATABASE_URL });
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
