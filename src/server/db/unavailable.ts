// Why the database of DATABASE_URL cannot be used, in one line a person can act on: the folder that cannot be
// created, the file that is not SQLite or is read-only, the PostgreSQL server that does not answer. The start,
// the token command and the migration runner print it instead of a driver's stack trace. No server-only marker:
// the command-line tools import it outside the server too.
import fs from 'node:fs';
import path from 'node:path';

import { databaseEngine } from './database-url';

/** The database of DATABASE_URL cannot be opened or written; `message` names the variable and the path. */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

type SystemError = Error & { code?: unknown; syscall?: unknown; path?: unknown; address?: unknown; port?: unknown; hostname?: unknown };

const FILE_SYSTEM_REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links',
};

/**
 * The same error as a DatabaseUnavailableError when it is one of the known ways a database cannot be used, or
 * undefined (a bug, or a failure this file does not know: it keeps its stack).
 */
export function asDatabaseUnavailable(error: unknown, databaseUrl: string): DatabaseUnavailableError | undefined {
  if (error instanceof DatabaseUnavailableError) return error;
  if (!(error instanceof Error)) return undefined;
  let engine;
  try {
    engine = databaseEngine(databaseUrl);
  } catch {
    return undefined;
  }
  const reason = engine === 'sqlite' ? sqliteReason(error as SystemError, databaseUrl) : postgresReason(error as SystemError, databaseUrl);
  if (reason === undefined) return undefined;
  const shown = engine === 'sqlite' ? databaseUrl : withoutCredentials(databaseUrl);
  return new DatabaseUnavailableError(`DATABASE_URL=${shown}: ${reason}`, { cause: error });
}

/** The file the adapter and the migration runner open: `file:` stripped, relative to the working directory. */
function sqliteFile(databaseUrl: string): string {
  return path.resolve(databaseUrl.slice('file:'.length));
}

function writable(entry: string): boolean {
  try {
    fs.accessSync(entry, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function sqliteReason(error: SystemError, databaseUrl: string): string | undefined {
  const file = sqliteFile(databaseUrl);
  const folder = path.dirname(file);
  const code = typeof error.code === 'string' ? error.code : '';
  if (error.syscall === 'mkdir') {
    // A recursive mkdir names the entry that stopped it: the whole path, or a file standing where a folder must be.
    const blocking = typeof error.path === 'string' ? error.path : folder;
    if (code === 'EEXIST' || code === 'ENOTDIR') return `cannot create the folder ${folder}: ${blocking} is a file, not a folder`;
    return `cannot create the folder ${folder}: ${FILE_SYSTEM_REASONS[code] ?? error.message}`;
  }
  if (!code.startsWith('SQLITE_')) return undefined;
  if (code === 'SQLITE_NOTADB') return `${file} is not a SQLite database`;
  if (code === 'SQLITE_CORRUPT') return `${file} is damaged (SQLite reports it as corrupt)`;
  if (code.startsWith('SQLITE_READONLY')) {
    const culprit = !writable(file) ? `${file} is read-only` : `its folder ${folder} is read-only (SQLite writes its journal beside the file)`;
    return `the database cannot be written: ${culprit}`;
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH')) {
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) return `${file} is a folder, not a database file`;
    if (!fs.existsSync(file) && !writable(folder)) return `cannot create ${file}: the folder ${folder} is not writable`;
    if (fs.existsSync(file) && !writable(folder)) return `cannot open ${file}: its folder ${folder} is not writable (SQLite keeps its journal beside the file)`;
    return `cannot open ${file} (${error.message})`;
  }
  if (code === 'SQLITE_FULL') return `cannot write ${file}: the disk is full`;
  if (code.startsWith('SQLITE_IOERR')) return `cannot read or write ${file}: ${error.message}`;
  return undefined;
}

/** The URL as far as it is safe to print: scheme, host, port and database, never the user or the password. */
function withoutCredentials(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(a postgresql:// URL)';
  }
}

/** PostgreSQL's SQLSTATE codes that say why a connection was refused. */
const POSTGRES_REFUSALS: Record<string, string> = {
  '28P01': 'the server refused the user name or password',
  '28000': 'the server refused this user or client address (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '3F000': 'the schema does not exist',
  '42501': 'the user lacks a privilege the migrations need',
  '53300': 'the server has too many connections',
  '57P03': 'the server is starting up or shutting down',
};

function postgresReason(error: SystemError, databaseUrl: string): string | undefined {
  const code = typeof error.code === 'string' ? error.code : '';
  let host = '';
  let hostName = '';
  try {
    ({ host, hostname: hostName } = new URL(databaseUrl));
  } catch {
    // The configuration's schema already refused URLs that do not parse.
  }
  if (code === 'ECONNREFUSED') return `cannot reach the PostgreSQL server at ${host}: connection refused (is it running, on this host and port?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `cannot reach the PostgreSQL server: the host name ${hostName} does not resolve`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `cannot reach the PostgreSQL server at ${host}: no route to the host`;
  if (code === 'ETIMEDOUT' || /timeout/i.test(error.message)) return `cannot reach the PostgreSQL server at ${host}: it did not answer in time`;
  if (code === 'ECONNRESET' || /Connection terminated unexpectedly/i.test(error.message)) {
    return `the PostgreSQL server at ${host} closed the connection (a TLS setting, or a server that is not PostgreSQL?)`;
  }
  if (POSTGRES_REFUSALS[code]) return `${POSTGRES_REFUSALS[code]} (${error.message})`;
  if (/\b(SSL|TLS|certificate)\b/i.test(error.message)) return `the TLS connection to ${host} failed: ${error.message}`;
  return undefined;
}
