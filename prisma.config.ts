import path from 'node:path';
import { defineConfig } from 'prisma/config';

// Prisma 7 reads no .env file; the CLI (generate, studio) gets the database from DATABASE_URL or the default.
export default defineConfig({
  schema: path.join('prisma', 'schema.prisma'),
  migrations: { path: path.join('prisma', 'migrations') },
  datasource: { url: process.env.DATABASE_URL ?? 'file:./data/plants.db' },
});
