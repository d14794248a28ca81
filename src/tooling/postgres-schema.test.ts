import fs from 'node:fs';

import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';

import { postgresSchemaFrom } from './postgres-schema';

describe('the two engines’ schemas', () => {
  it('PostgreSQL’s is what `npm run db:generate` writes from prisma/schema.prisma', () => {
    const generated = postgresSchemaFrom(fs.readFileSync(engineLayouts.sqlite.schemaPath, 'utf8'));
    expect(fs.readFileSync(engineLayouts.postgresql.schemaPath, 'utf8'), 'run npm run db:generate and commit the result').toBe(generated);
  });

  it('turns the source’s `//@postgresql ` lines into schema lines, and only those', () => {
    const source = fs.readFileSync(engineLayouts.sqlite.schemaPath, 'utf8');
    const generated = postgresSchemaFrom(source);
    expect(generated).toContain('\n  @@index([nameFolded(ops: raw("gin_trgm_ops"))], type: Gin, map: "Plant_nameFolded_trgm_idx")\n');
    expect(generated).not.toMatch(/^[ \t]*\/\/@postgresql /m);
    // Everything else is the source, but for the provider and the client's folder.
    const lines = (text: string) => text.split('\n').filter((line) => !/@postgresql|provider|output|^\/\//.test(line) && !line.includes('gin_trgm_ops'));
    expect(lines(generated)).toEqual(lines(source));
  });

  it.each(Object.entries(engineLayouts))('%s: migration_lock.toml names its provider', (_engine, layout) => {
    expect(fs.readFileSync(`${layout.migrationsDir}/migration_lock.toml`, 'utf8')).toContain(`provider = "${layout.provider}"`);
  });
});
