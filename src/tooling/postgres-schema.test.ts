import fs from 'node:fs';

import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';

import { postgresSchemaFrom } from './postgres-schema';

describe('the two engines’ schemas', () => {
  it('PostgreSQL’s is what `npm run db:generate` writes from prisma/schema.prisma', () => {
    const generated = postgresSchemaFrom(fs.readFileSync(engineLayouts.sqlite.schemaPath, 'utf8'));
    expect(fs.readFileSync(engineLayouts.postgresql.schemaPath, 'utf8'), 'run npm run db:generate and commit the result').toBe(generated);
  });

  it.each(Object.entries(engineLayouts))('%s: migration_lock.toml names its provider', (_engine, layout) => {
    expect(fs.readFileSync(`${layout.migrationsDir}/migration_lock.toml`, 'utf8')).toContain(`provider = "${layout.provider}"`);
  });
});
