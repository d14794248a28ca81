import fs from 'node:fs';

import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';

import { schemaWithFieldCopies } from './plant-field-models';

describe("the declared plant fields' copies in prisma/schema.prisma", () => {
  const schema = fs.readFileSync(engineLayouts.sqlite.schemaPath, 'utf8');
  /** The schema with Plant's own `tag` line (the first in the file) replaced. */
  const withPlantTag = (line: string | null) => {
    const lines = schema.split('\n');
    const at = lines.findIndex((candidate) => /^[ \t]+tag[ \t]+String\?$/.test(candidate));
    lines.splice(at, 1, ...(line === null ? [] : [line]));
    return lines.join('\n');
  };
  const modelOf = (text: string, model: string) => text.slice(text.indexOf(`model ${model} {`), text.indexOf('\n}', text.indexOf(`model ${model} {`)));

  it('are what `npm run db:generate` writes from Plant’s lines', () => {
    expect(schema, 'run npm run db:generate and commit the result').toBe(schemaWithFieldCopies(schema));
  });

  it("follow Plant's types: the same on PlantTombstone, optional on PlantChange", () => {
    const written = schemaWithFieldCopies(withPlantTag('  tag       String'));
    expect(modelOf(written, 'PlantTombstone')).toContain('\n  tag String\n');
    expect(modelOf(written, 'PlantChange')).toContain('\n  tag String?\n');
  });

  it('refuses a declared field Plant has no line for', () => {
    expect(() => schemaWithFieldCopies(withPlantTag(null))).toThrow('the plant field tag is declared in src/shared/plants.ts but has no line on model Plant');
  });
});
