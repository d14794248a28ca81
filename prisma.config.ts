import { defineConfig } from 'prisma/config';

import { engineLayouts, externalTablesFor } from './src/server/db/engines';
import { databaseEngine, DEFAULT_DATABASE_URL } from './src/server/db/database-url';

// Prisma 7 reads no .env file; the CLI gets the database from DATABASE_URL or the SQLite default, and the
// schema and migrations of the engine that URL selects, as the app and its migration runner do.
const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const { schemaPath, migrationsDir } = engineLayouts[databaseEngine(url)];

export default defineConfig({
  schema: schemaPath,
  migrations: { path: migrationsDir },
  datasource: { url },
  // Tables the migrations make that the schema cannot declare (engines.ts): `prisma migrate` leaves them be.
  tables: { external: externalTablesFor(url) },
  experimental: { externalTables: true },
});
