// Authoring: `npm run db:new-migration -- <name>` writes the next migration like `prisma migrate dev --create-only`,
// with Prisma's schema engine compiled to WebAssembly (src/tooling/schema-engine.ts).
// SQLite by default (in memory); with DATABASE_URL=postgresql://… it writes prisma/postgresql/migrations/ and
// needs that server for a throwaway shadow database (`node --import tsx test-support/postgres.ts` starts one).
// When the triggers the declared plant fields (shared/plants.ts) decide are not what the latest migration holding
// them wrote (plant-field-triggers.ts: the webhook outbox, the live feed's change log, the list versions), the
// migration also rewrites them: their SQL cannot follow the declaration by itself.
// When the name fold (shared/name-fold-table.ts, name-fold-sql.ts) differs from the latest migration's, the
// migration ends with it (the table loaded again, its triggers, every name folded again). Either is reason
// enough for a migration, with no change of the schema.
import fs from 'node:fs';
import path from 'node:path';

import { databaseEngine, DEFAULT_DATABASE_URL } from '@/server/db/database-url';

import { engineLayouts, externalTablesFor } from '@/server/db/engines';
import { latestNameFoldSql, nameFoldSql } from './name-fold-sql';
import { latestPlantFieldTriggersSql, plantFieldTriggersSql } from './plant-field-triggers';
import { committedMigrations, LOCKFILE_NAME, lockfileContent, startSchemaEngine } from './schema-engine';

const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const engine = databaseEngine(databaseUrl);
const { schemaPath, migrationsDir, provider } = engineLayouts[engine];

/** The migration folder name Prisma would use: `migrate dev --name` slugifies with `_` and caps at 200 characters. */
function migrationSlug(name: string): string {
  return name
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z\d]+/g, '_')
    .replace(/^_|_$/g, '')
    .slice(0, 200);
}

/** UTC `YYYYMMDDHHMMSS`, the engine's prefix for migration folders. */
function migrationTimestamp(now: Date): string {
  return now.toISOString().replace(/\D/g, '').slice(0, 14);
}

async function main(): Promise<void> {
  const name = migrationSlug(process.argv[2] ?? '');
  if (!name) {
    console.error('usage: npm run db:new-migration -- <name>');
    process.exitCode = 1;
    return;
  }

  // SQLite diffs in memory and never touches a real database.
  const { engine: schemaEngine, close } = await startSchemaEngine(engine === 'sqlite' ? 'file::memory:' : databaseUrl);
  // `migrate dev` also prepends a comment listing destructive changes; the Wasm engine computes those only in
  // createMigration and evaluateDataLoss, which need the native engine's own in-memory shadow database. Review
  // drops and table redefinitions by hand.
  const { exitCode, stdout: script } = await schemaEngine.diff({
    from: { tag: 'migrations', ...committedMigrations(databaseUrl) },
    to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: fs.readFileSync(schemaPath, 'utf8') }] },
    script: true,
    exitCode: true,
    filters: { externalTables: externalTablesFor(databaseUrl), externalEnums: [] },
  });
  await close();

  const schemaDiffers = exitCode === 2 && script !== null;
  const fieldTriggers = plantFieldTriggersSql(engine);
  const triggersDiffer = latestPlantFieldTriggersSql(migrationsDir) !== fieldTriggers;
  const nameFold = nameFoldSql(engine);
  const foldDiffers = latestNameFoldSql(migrationsDir) !== nameFold;
  if (!schemaDiffers && !triggersDiffer && !foldDiffers) {
    console.log(`no changes: the migrations already match ${path.relative(process.cwd(), schemaPath)}, the declared plant fields and the name fold`);
    return;
  }

  const folderName = `${migrationTimestamp(new Date())}_${name}`;
  const migrationPath = path.join(migrationsDir, folderName, 'migration.sql');
  // The name fold last: latestNameFoldSql reads it from its first line to the end of the file.
  const parts = [schemaDiffers ? script : '', triggersDiffer ? fieldTriggers : '', foldDiffers ? nameFold : ''].filter((part) => part !== '');
  fs.mkdirSync(path.dirname(migrationPath), { recursive: true });
  fs.writeFileSync(migrationPath, parts.join('\n'), { flag: 'wx' });
  fs.writeFileSync(path.join(migrationsDir, LOCKFILE_NAME), lockfileContent(provider));
  const also = [triggersDiffer ? 'the triggers rewritten for the declared plant fields' : '', foldDiffers ? 'the name fold' : ''].filter((part) => part !== '');
  console.log(`wrote ${path.relative(process.cwd(), migrationPath)}${also.length > 0 ? `, with ${also.join(' and ')}` : ''}`);
}

await main();
