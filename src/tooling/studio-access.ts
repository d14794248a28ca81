/**
 * How Prisma's CLI (`npx prisma …`, through prisma.config.ts) reaches the app's database, and how Prisma Studio
 * is kept from writing to it unless asked to. Read in Prisma 7.10's CLI (node_modules/prisma/build/cli.js):
 *
 * - Studio takes a URL's scheme to be everything before "://", so the app's own SQLite forms,
 *   `file:./data/plants.db` and `file:/abs/path.db`, are "not supported", and it resolves a relative path from
 *   the folder of the config file, where the app resolves it from its working directory. The CLI gets
 *   `file://` and the absolute path of the very file the app opens (unencoded: Studio strips `file:` and hands
 *   the rest to path.resolve, which would keep a `%20`).
 * - Studio writes through its own connection: on SQLite better-sqlite3 or node:sqlite opened with no flags
 *   (studio-read-only/ makes that connection read-only), on PostgreSQL the `postgres` package with the URL, whose
 *   `options` parameter reaches the server at connection start (`-c default_transaction_read_only=on`: every
 *   transaction of the session is read-only unless one of its statements asks otherwise; Studio's edits do not).
 */
import { register } from 'node:module';

// Relative, not '@/…': prisma.config.ts loads this file through Prisma's config loader, which knows no tsconfig paths.
import { databaseEngine, databaseFilePath } from '../server/db/database-url';

/** The variable that lets Studio write (`npm run studio -- --write` sets it for the CLI it starts). */
export const STUDIO_WRITE_VARIABLE = 'STUDIO_WRITE';

/** The URL Prisma's CLI gets for the app's DATABASE_URL: SQLite as `file://` and the absolute path the app opens. */
export function prismaCliDatabaseUrl(databaseUrl: string, cwd = process.cwd()): string {
  if (databaseEngine(databaseUrl) !== 'sqlite') return databaseUrl;
  return `file://${databaseFilePath(databaseUrl, cwd)}`;
}

/** Commands of Prisma's CLI that never run its native schema engine (which the CLI downloads before them). */
export const ENGINE_FREE_COMMANDS = new Set(['generate', 'validate', 'format']);

/** The CLI's command: its first argument that is neither an option nor the value of one. */
export function prismaCommand(argv: readonly string[]): string | undefined {
  const args = argv.slice(2);
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === '--config' || arg === '--schema') index += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** A PostgreSQL URL whose sessions start read-only, whatever `options` it already carried. */
export function readOnlyPostgresUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options');
  url.searchParams.set('options', `${options ? `${options} ` : ''}-c default_transaction_read_only=on`);
  return url.toString();
}

/**
 * The URL Studio gets, for `studio` run through prisma.config.ts: read-only unless STUDIO_WRITE=1. On SQLite
 * the URL cannot say it, so the module hooks that make Studio's connection read-only are registered here, in the
 * CLI's own process, before Studio imports its driver.
 */
export function studioDatabaseUrl(cliUrl: string, environment: Record<string, string | undefined> = process.env): string {
  if (environment[STUDIO_WRITE_VARIABLE] === '1') return cliUrl;
  if (databaseEngine(cliUrl) === 'postgresql') return readOnlyPostgresUrl(cliUrl);
  register(new URL('./studio-read-only/hooks.mjs', import.meta.url));
  return cliUrl;
}
