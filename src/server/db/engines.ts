// Where each engine's schema and migrations live. SQLite keeps Prisma's default places (prisma/schema.prisma,
// prisma/migrations) so the plain CLI works on it; PostgreSQL has the same model in prisma/postgresql/.
import path from 'node:path';

import { projectRoot } from '../paths';

import { type DatabaseEngine, databaseEngine, postgresConnection } from './database-url';

const prismaDir = path.join(projectRoot, 'prisma');

export type EngineLayout = {
  schemaPath: string;
  migrationsDir: string;
  /** The provider named in migration_lock.toml. */
  provider: 'sqlite' | 'postgresql';
  /**
   * Tables the migrations make that the Prisma schema does not declare, so that a schema diff (`npm run
   * db:new-migration`, the drift test, Prisma's CLI through prisma.config.ts) leaves them be: on SQLite the
   * name search's FTS5 table and the tables FTS5 keeps its index in (migration *_plant_name_search), and the
   * fts5vocab table that reads its terms (migration *_plant_name_search_two_characters), none of which a schema
   * can declare; and the name fold's table, the database's own copy of code (src/tooling/name-fold-sql.ts), which
   * no client reads and Prisma Studio had better not offer to edit (PostgreSQL folds without a table). On
   * PostgreSQL: the rate-limit budgets the instances share, an UNLOGGED table (migration *_shared_rate_budget).
   */
  externalTables: string[];
};

const NAME_SEARCH_TABLE = 'PlantNameSearch';
/** The name fold's table on SQLite, which the migrations load (src/tooling/name-fold-sql.ts). */
export const NAME_FOLD_TABLE = 'PlantNameFold';

export const engineLayouts: Record<DatabaseEngine, EngineLayout> = {
  sqlite: {
    schemaPath: path.join(prismaDir, 'schema.prisma'),
    migrationsDir: path.join(prismaDir, 'migrations'),
    provider: 'sqlite',
    externalTables: [NAME_SEARCH_TABLE, `${NAME_SEARCH_TABLE}Terms`, ...['config', 'data', 'docsize', 'idx'].map((shadow) => `${NAME_SEARCH_TABLE}_${shadow}`), NAME_FOLD_TABLE],
  },
  postgresql: {
    schemaPath: path.join(prismaDir, 'postgresql', 'schema.prisma'),
    migrationsDir: path.join(prismaDir, 'postgresql', 'migrations'),
    provider: 'postgresql',
    externalTables: ['RateBudget'],
  },
};

/**
 * The external tables as the schema engine takes them for a database: PostgreSQL's qualified with the schema
 * the URL names (`?schema=`, else public), as Prisma requires where a database has schemas.
 */
export function externalTablesFor(databaseUrl: string): string[] {
  const engine = databaseEngine(databaseUrl);
  const { externalTables } = engineLayouts[engine];
  if (engine === 'sqlite') return externalTables;
  const schema = postgresConnection(databaseUrl).schema ?? 'public';
  return externalTables.map((table) => `${schema}.${table}`);
}
