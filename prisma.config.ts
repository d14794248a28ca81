import { fileURLToPath } from 'node:url';

import { defineConfig } from 'prisma/config';

import { engineLayouts, externalTablesFor } from './src/server/db/engines';
import { databaseEngine, DEFAULT_DATABASE_URL } from './src/server/db/database-url';
import { ENGINE_FREE_COMMANDS, prismaCliDatabaseUrl, prismaCommand, studioDatabaseUrl } from './src/tooling/studio-access';

// Prisma 7 reads no .env file; the CLI gets the database from DATABASE_URL or the SQLite default, and the
// schema and migrations of the engine that URL selects, as the app and its migration runner do. A SQLite URL
// reaches the CLI as the absolute file the app opens, in the form Studio reads; Studio opens it read-only
// unless STUDIO_WRITE=1 (src/tooling/studio-access.ts, docs/commands.md "Prisma Studio").
const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const command = prismaCommand(process.argv);
// The CLI downloads Prisma's native schema engine before generate, validate or format, which never run it, unless
// PRISMA_SCHEMA_ENGINE_BINARY names a file: any existing one spares a download that fails on closed networks.
if (command && ENGINE_FREE_COMMANDS.has(command)) process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= fileURLToPath(import.meta.url);
const { schemaPath, migrationsDir } = engineLayouts[databaseEngine(url)];
const cliUrl = prismaCliDatabaseUrl(url);

export default defineConfig({
  schema: schemaPath,
  migrations: { path: migrationsDir },
  datasource: { url: command === 'studio' ? studioDatabaseUrl(cliUrl) : cliUrl },
  // Tables the migrations make that the schema cannot declare (engines.ts): `prisma migrate` leaves them be.
  tables: { external: externalTablesFor(url) },
  experimental: { externalTables: true },
});
