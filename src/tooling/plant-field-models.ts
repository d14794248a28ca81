/**
 * The declared plant fields' copies in prisma/schema.prisma. Every field of `plantFields` (shared/plants.ts) is a
 * column of the same name on Plant, on PlantTombstone (what undo keeps and a restore writes back: the field as Plant
 * types it) and on PlantChange (the live feed's log: each optional, since a delete logs none). Plant's line is
 * written by hand (its type and attributes are the model's decision); `npm run db:generate` writes the two copies
 * from it, between each model's marker comments, so a new field is one line of the model. plant-field-models.test.ts
 * fails until the copies are current.
 */
import { readFileSync, writeFileSync } from 'node:fs';

import { engineLayouts } from '@/server/db/engines';
import { PLANT_FIELD_NAMES } from '@/shared/plants';

const FIRST = '// The declared plant fields';
const LAST = '// End of the declared plant fields.';

/** The lines of `model <name> { … }` in `schema`, as [first line after the brace, the closing brace). */
function modelLines(lines: readonly string[], model: string): [number, number] {
  const start = lines.findIndex((line) => new RegExp(`^model ${model} \\{`).test(line));
  const end = lines.findIndex((line, index) => index > start && /^\}/.test(line));
  if (start < 0 || end < 0) throw new Error(`prisma/schema.prisma has no model ${model}`);
  return [start + 1, end];
}

/** Each declared field's type on Plant (`String`, `String?`, …), from its line there. */
function plantFieldTypes(lines: readonly string[]): Map<string, string> {
  const [start, end] = modelLines(lines, 'Plant');
  return new Map(
    PLANT_FIELD_NAMES.map((field) => {
      const line = lines.slice(start, end).find((candidate) => new RegExp(`^\\s+${field}\\s`).test(candidate));
      const type = line?.trim().split(/\s+/)[1];
      if (!type) throw new Error(`the plant field ${field} is declared in src/shared/plants.ts but has no line on model Plant in prisma/schema.prisma (an optional text: \`${field} String?\`)`);
      return [field, type];
    }),
  );
}

/** The schema with PlantTombstone's and PlantChange's copies of the declared fields written from Plant's lines. */
export function schemaWithFieldCopies(schema: string): string {
  const lines = schema.split('\n');
  const types = plantFieldTypes(lines);
  const copies: Record<string, (type: string) => string> = { PlantTombstone: (type) => type, PlantChange: (type) => (type.endsWith('?') ? type : `${type}?`) };
  for (const [model, typed] of Object.entries(copies)) {
    const [start, end] = modelLines(lines, model);
    const first = lines.findIndex((line, index) => index >= start && index < end && line.trim().startsWith(FIRST));
    const last = lines.findIndex((line, index) => index > first && index < end && line.trim() === LAST);
    if (first < 0 || last < 0) throw new Error(`model ${model} in prisma/schema.prisma lacks the lines "${FIRST}…" and "${LAST}" around its copies of the plant fields`);
    lines.splice(first + 1, last - first - 1, ...PLANT_FIELD_NAMES.map((field) => `  ${field} ${typed(types.get(field)!)}`));
  }
  return lines.join('\n');
}

/** Writes the copies into prisma/schema.prisma when they are not current. */
export function writePlantFieldCopies(): void {
  const { schemaPath } = engineLayouts.sqlite;
  const schema = readFileSync(schemaPath, 'utf8');
  const written = schemaWithFieldCopies(schema);
  if (written !== schema) writeFileSync(schemaPath, written);
}
