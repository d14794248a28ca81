// `npm run db:backup -- <file>`: a consistent copy of the database taken while the server runs (see docs/operations.md).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';

import { databaseEngine, postgresConnection } from './database-url';
import { databaseFilePath } from './migrate-sqlite';

export type BackupResult = { engine: 'sqlite' | 'postgresql'; file: string; bytes: number; detail: string };

/** Long enough to wait out a write transaction of the running server, short enough to report a stuck one. */
const BUSY_TIMEOUT_MS = 30_000;

/**
 * A backup never replaces an existing file (an earlier backup may be the only good one), and it appears
 * under its name only once it is complete and checked: it is written beside it under a temporary name
 * and renamed, so a crash or a failed check leaves no half-copy that looks like a backup. It holds what the
 * database holds (token hashes, user names, webhook URLs and encrypted secrets, kept answers), so it is its
 * owner's alone: the folders this creates are 0700, the file 0600 from its first byte (createPartial).
 */
function claimTarget(target: string): string {
  const file = path.resolve(target);
  if (fs.existsSync(file)) throw new Error(`${file} exists; a backup never overwrites a file: name a new one`);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  return file;
}

/**
 * The temporary file, made empty and 0600 before any data goes in: SQLite's backup and pg_dump then write into
 * it and keep its mode (a file they created would be 0644 under the usual umask), and SQLite gives the journal
 * beside it the same mode.
 */
function createPartial(file: string): string {
  const partial = `${file}.partial-${process.pid}`;
  fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  return partial;
}

/**
 * SQLite: the online backup API (better-sqlite3's `backup()`, sqlite3_backup_*) copies the database page by
 * page from one read snapshot, so writes that commit while it runs are either wholly in the copy or not at
 * all, and the server is not stopped (it waits at most for the copy of one step's pages, not for the whole
 * file). A plain file copy of a database in WAL mode can miss committed transactions that are still in the
 * -wal file, or catch a checkpoint half-way. The copy is then checked with `PRAGMA integrity_check`.
 */
async function backupSqlite(databaseUrl: string, file: string): Promise<BackupResult> {
  const source = databaseFilePath(databaseUrl);
  if (!fs.existsSync(source)) throw new Error(`there is no database at ${source} (DATABASE_URL); nothing to back up`);
  const partial = createPartial(file);
  let database: Database.Database | undefined;
  try {
    database = new Database(source, { fileMustExist: true });
    database.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // After the first (empty) step, one step copies every page: copied in slices, a copy is restarted by every
    // write that commits between two slices and would never finish under steady writes; in one step it holds
    // one read snapshot for the copy's own time (WAL: the server's writes go on meanwhile).
    await database.backup(partial, { progress: () => 0x7fffffff });
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    database?.close();
  }
  try {
    const copy = new Database(partial, { fileMustExist: true });
    let problems: string[];
    try {
      problems = (copy.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
      const foreignKeys = copy.pragma('foreign_key_check') as unknown[];
      if (foreignKeys.length > 0) problems.push(`${foreignKeys.length} rows break a foreign key`);
      // The copy is a self-contained file: no -wal beside it is needed to read it.
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    if (problems.length !== 1 || problems[0] !== 'ok') throw new Error(`the copy failed PRAGMA integrity_check: ${problems.slice(0, 5).join('; ')}`);
    fs.renameSync(partial, file);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
  return { engine: 'sqlite', file, bytes: fs.statSync(file).size, detail: 'online backup API copy; PRAGMA integrity_check: ok' };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(`${command} was not found: install PostgreSQL's client tools (the same major version as the server or newer), or set PG_BIN to their folder`) : error),
    );
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

/**
 * PostgreSQL: `pg_dump --format=custom`, which reads the whole database in one repeatable-read transaction
 * (a consistent snapshot; the server goes on writing), then `pg_restore --list` to check that the archive is
 * complete and readable. The connection's password goes through the environment (PGPASSWORD), never the
 * command line, which other users of the machine can read. Restore: `pg_restore --no-owner -d <empty database>`
 * (docs/operations.md).
 */
async function backupPostgres(databaseUrl: string, file: string): Promise<BackupResult> {
  const { connectionString, schema } = postgresConnection(databaseUrl);
  const url = new URL(connectionString);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env: NodeJS.ProcessEnv = { ...process.env, ...(password ? { PGPASSWORD: password } : {}) };
  const bin = (name: string) => (process.env.PG_BIN ? path.join(process.env.PG_BIN, name) : name);
  const partial = createPartial(file);
  try {
    const dump = await run(
      bin('pg_dump'),
      ['--format=custom', '--no-owner', '--no-privileges', ...(schema ? [`--schema=${schema}`] : []), `--file=${partial}`, `--dbname=${url.toString()}`],
      env,
    );
    if (dump.code !== 0) throw new Error(`pg_dump failed (exit ${dump.code}): ${dump.stderr.trim()}`);
    const list = await run(bin('pg_restore'), ['--list', partial], env);
    if (list.code !== 0) throw new Error(`pg_restore --list cannot read the archive (exit ${list.code}): ${list.stderr.trim()}`);
    fs.renameSync(partial, file);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
  return { engine: 'postgresql', file, bytes: fs.statSync(file).size, detail: 'pg_dump --format=custom (one snapshot); pg_restore --list: readable' };
}

export async function backupDatabase(databaseUrl: string, target: string): Promise<BackupResult> {
  const engine = databaseEngine(databaseUrl);
  const file = claimTarget(target);
  return engine === 'sqlite' ? backupSqlite(databaseUrl, file) : backupPostgres(databaseUrl, file);
}
