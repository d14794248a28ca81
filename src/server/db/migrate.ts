// The project's migration runner (`npm start`, `npm run db:migrate`): applies the committed migrations of the engine
// DATABASE_URL selects, because Prisma 7's CLI needs a native schema engine that not every machine can download. It
// keeps `_prisma_migrations` exactly as Prisma does on that engine, so `prisma migrate deploy` can take over any time.
import { databaseEngine } from './database-url';
import { engineLayouts } from './engines';
import { applyPostgresMigrations } from './migrate-postgresql';
import { applySqliteMigrations } from './migrate-sqlite';
import { type ApplyMigrationsOptions, readMigrationFiles, warnAboutMissingFiles } from './migration-history';
import { asDatabaseUnavailable } from './unavailable';

export { databaseFilePath } from './migrate-sqlite';
export type { ApplyMigrationsOptions } from './migration-history';

/**
 * The runner is the first to touch the database (the app's client opens only after it), so a database that cannot
 * be used (a folder that cannot be created, a file that is not SQLite or is read-only, a server that does not
 * answer) is reported from here, as a DatabaseUnavailableError whose one line names DATABASE_URL.
 */
export async function applyMigrations(options: ApplyMigrationsOptions): Promise<{ applied: string[] }> {
  const engine = databaseEngine(options.databaseUrl);
  const { migrationsDir = engineLayouts[engine].migrationsDir, log = console.log } = options;
  const files = readMigrationFiles(migrationsDir);

  let outcome;
  try {
    outcome =
      engine === 'sqlite'
        ? applySqliteMigrations(options.databaseUrl, files, log)
        : await applyPostgresMigrations(options.databaseUrl, files, log);
  } catch (error) {
    throw asDatabaseUnavailable(error, options.databaseUrl) ?? error;
  }
  const { applied, history } = outcome;

  warnAboutMissingFiles(history, files, migrationsDir, log);
  if (applied.length === 0) log('database is up to date');
  return { applied };
}
