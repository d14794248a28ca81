// Where each engine's schema and migrations live. SQLite keeps Prisma's default places (prisma/schema.prisma,
// prisma/migrations) so the plain CLI works on it; PostgreSQL has the same model in prisma/postgresql/.
import path from 'node:path';

import { projectRoot } from '../paths';

import type { DatabaseEngine } from './database-url';

const prismaDir = path.join(projectRoot, 'prisma');

export type EngineLayout = {
  schemaPath: string;
  migrationsDir: string;
  /** The provider named in migration_lock.toml. */
  provider: 'sqlite' | 'postgresql';
};

export const engineLayouts: Record<DatabaseEngine, EngineLayout> = {
  sqlite: {
    schemaPath: path.join(prismaDir, 'schema.prisma'),
    migrationsDir: path.join(prismaDir, 'migrations'),
    provider: 'sqlite',
  },
  postgresql: {
    schemaPath: path.join(prismaDir, 'postgresql', 'schema.prisma'),
    migrationsDir: path.join(prismaDir, 'postgresql', 'migrations'),
    provider: 'postgresql',
  },
};
