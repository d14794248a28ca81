import path from 'node:path';

/**
 * Which engine a DATABASE_URL selects: `file:` is SQLite (the embedded default), `postgresql://` or
 * `postgres://` is PostgreSQL. Shared by the app, the migration runner and the token command, so all
 * three read a URL the same way. No server-only marker: the runner and the CLIs import it outside Next.js.
 */
export const DEFAULT_DATABASE_URL = 'file:./data/plants.db';

export type DatabaseEngine = 'sqlite' | 'postgresql';

export function databaseEngine(databaseUrl: string): DatabaseEngine {
  if (databaseUrl.startsWith('file:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return 'postgresql';
  // Never echo the URL: it may carry a password.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(databaseUrl)?.[0] ?? '(none)';
  throw new Error(`DATABASE_URL must start with file: (SQLite) or postgresql:// (PostgreSQL); its scheme is ${scheme}`);
}

/**
 * The file the app's adapter opens for this URL: `@prisma/adapter-better-sqlite3` strips `file:` and hands the rest
 * to SQLite, so `file:./x.db` is relative to the working directory and `file:/abs` and `file:///abs` are absolute.
 */
export function databaseFilePath(databaseUrl: string, cwd = process.cwd()): string {
  if (!databaseUrl.startsWith('file:')) {
    throw new Error(`DATABASE_URL must be a SQLite file: URL, got "${databaseUrl}"`);
  }
  return path.resolve(cwd, databaseUrl.slice('file:'.length));
}

/**
 * Prisma's own URL convention for a PostgreSQL schema other than `public`: `?schema=name`. It is not a
 * libpq parameter, so it is taken out before the URL reaches the driver.
 */
export function postgresConnection(databaseUrl: string): { connectionString: string; schema: string | undefined } {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? undefined;
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema: schema === '' ? undefined : schema };
}
