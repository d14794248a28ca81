// What both engines' runners share: the committed migrations, their checksums, and the rules Prisma applies
// before it continues a recorded history.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface MigrationFile {
  name: string;
  script: string;
  checksum: string;
}

export interface MigrationRecord {
  migration_name: string;
  checksum: string;
  started_at: number | string | Date;
  finished_at: number | string | Date | null;
  rolled_back_at: number | string | Date | null;
  logs: string | null;
}

export interface ApplyMigrationsOptions {
  /** A `file:` URL (SQLite) or a `postgresql://` URL. */
  databaseUrl: string;
  /** Default: the engine's committed folder (db/engines.ts). */
  migrationsDir?: string;
  log?: (line: string) => void;
}

/** Prisma's migrate commands take this PostgreSQL advisory lock; the runner takes the same, so they take turns. */
export const PRISMA_ADVISORY_LOCK_ID = 72707369;

function sha256Hex(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Like Prisma, a checkout that only changed line endings (git on Windows) still matches. */
function matchesChecksum(script: string, checksum: string): boolean {
  const lineEndingVariants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return lineEndingVariants.some((variant) => sha256Hex(variant) === checksum);
}

export function readMigrationFiles(migrationsDir: string): MigrationFile[] {
  if (!fs.existsSync(migrationsDir)) throw new Error(`No migrations folder at ${migrationsDir}`);
  return fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const scriptPath = path.join(migrationsDir, name, 'migration.sql');
      if (!fs.existsSync(scriptPath)) throw new Error(`Migration ${name} has no migration.sql`);
      const bytes = fs.readFileSync(scriptPath);
      return { name, script: bytes.toString('utf8'), checksum: sha256Hex(bytes) };
    });
}

/** Prisma's SQLite engine writes Unix milliseconds; PostgreSQL gives dates; other tools may leave text. */
function formatTimestamp(value: number | string | Date): string {
  return typeof value === 'string' ? value : new Date(value).toISOString();
}

/** Throws, as Prisma does, when the recorded history cannot be continued safely. */
export function assertHistoryContinuable(history: MigrationRecord[], files: MigrationFile[]): void {
  const failed = history.find((record) => record.finished_at === null && record.rolled_back_at === null);
  if (failed) {
    throw new Error(
      `Migration ${failed.migration_name} is recorded as failed (started at ${formatTimestamp(failed.started_at)})` +
        (failed.logs ? ` with:\n${failed.logs.trim()}\n` : '. ') +
        `Resolve it with \`prisma migrate resolve --rolled-back ${failed.migration_name}\` (or --applied) first.`,
    );
  }
  for (const record of history) {
    if (record.rolled_back_at !== null) continue;
    const file = files.find((candidate) => candidate.name === record.migration_name);
    if (file && !matchesChecksum(file.script, record.checksum)) {
      throw new Error(
        `Migration ${record.migration_name} was modified after it was applied ` +
          `(checksum in database ${record.checksum}, file ${file.checksum}). Restore the applied migration.sql.`,
      );
    }
  }
}

export function isApplied(history: MigrationRecord[], name: string): boolean {
  return history.some((record) => record.migration_name === name && record.rolled_back_at === null);
}

/** Applied migrations whose folder is gone: Prisma warns about them and goes on. */
export function warnAboutMissingFiles(history: MigrationRecord[], files: MigrationFile[], migrationsDir: string, log: (line: string) => void): void {
  for (const record of history) {
    if (!files.some((file) => file.name === record.migration_name)) {
      log(`warning: applied migration ${record.migration_name} is not in ${migrationsDir}`);
    }
  }
}
