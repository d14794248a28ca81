/**
 * `npm run db:backup -- <file>`: a consistent copy of DATABASE_URL's database, taken while the server runs,
 * checked, and written to <file> (never over an existing one). SQLite: a database file; PostgreSQL: a
 * pg_dump archive (custom format). Restoring: docs/operations.md.
 */
import { config, ConfigError } from '@/server/config';
import { backupDatabase } from '@/server/db/backup';

const [target, ...extra] = process.argv.slice(2);
if (!target || extra.length > 0 || target.startsWith('-')) {
  console.error('usage: npm run db:backup -- <file>   (a new file: the backup never overwrites one)');
  process.exit(2);
}

try {
  const started = performance.now();
  const result = await backupDatabase(config().DATABASE_URL, target);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`backed up the ${result.engine} database to ${result.file} (${result.bytes} bytes, ${seconds} s): ${result.detail}`);
} catch (error) {
  console.error(`backup failed: ${error instanceof ConfigError || error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
