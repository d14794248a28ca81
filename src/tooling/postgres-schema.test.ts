import fs from 'node:fs';

import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';

/** A schema without its generator and datasource blocks and comments: the models and enums, as written. */
function modelsOf(schemaPath: string): string {
  return fs
    .readFileSync(schemaPath, 'utf8')
    .replace(/^(generator|datasource) \w+ \{[^}]*\}\n/gm, '')
    .replace(/^\/\/ .*\n/gm, '')
    .trim();
}

describe('the two engines’ schemas', () => {
  it('hold the same models and enums, so both generated clients have one API', () => {
    const sqlite = modelsOf(engineLayouts.sqlite.schemaPath);
    expect(sqlite).toMatch(/^enum Role \{/);
    expect(sqlite).toContain('model Plant {');
    expect(modelsOf(engineLayouts.postgresql.schemaPath)).toBe(sqlite);
  });

  it('differ only in provider and client folder', () => {
    const datasource = (schemaPath: string) => /datasource db \{\s*provider = "(\w+)"\s*\}/.exec(fs.readFileSync(schemaPath, 'utf8'))?.[1];
    expect(datasource(engineLayouts.sqlite.schemaPath)).toBe('sqlite');
    expect(datasource(engineLayouts.postgresql.schemaPath)).toBe('postgresql');
  });

  it.each(Object.entries(engineLayouts))('%s: migration_lock.toml names its provider', (_engine, layout) => {
    expect(fs.readFileSync(`${layout.migrationsDir}/migration_lock.toml`, 'utf8')).toContain(`provider = "${layout.provider}"`);
  });
});
