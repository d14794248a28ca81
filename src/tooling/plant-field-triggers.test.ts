import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';
import { PLANT_FIELD_NAMES } from '@/shared/plants';

import { latestPlantFieldTriggersSql, plantFieldTriggersSql } from './plant-field-triggers';

/**
 * The triggers the declared plant fields decide (plant-field-triggers.ts): the migrations hold what the code writes
 * now. What the triggers do, field by field, on both engines: e2e/api/plant-field-triggers.test.ts.
 */
describe('the triggers the declared plant fields decide, in the migrations', () => {
  for (const engine of ['sqlite', 'postgresql'] as const) {
    it(`are, in the latest ${engine} migration that holds them, what plant-field-triggers.ts writes now (else: npm run db:new-migration)`, () => {
      expect(latestPlantFieldTriggersSql(engineLayouts[engine].migrationsDir)).toBe(plantFieldTriggersSql(engine));
    });

    it(`on ${engine}, log, compare and publish every declared field`, () => {
      const sql = plantFieldTriggersSql(engine);
      const columns = PLANT_FIELD_NAMES.map((field) => `"${field}"`).join(', ');
      // The change log's rows, what an update of the log and of the list version watches, and the webhook's data.
      expect(sql).toContain(`INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", ${columns}, "atMs")`);
      expect(sql).toContain(`UPDATE OF ${columns} ON "Plant"`);
      expect(sql).toContain(engine === 'sqlite' ? `UPDATE OF "id", ${columns}, "nameFolded", "ownerId" ON "Plant"` : `SELECT "id", ${columns}, "nameFolded", "ownerId" FROM new_rows`);
      for (const field of PLANT_FIELD_NAMES) expect(sql).toContain(engine === 'sqlite' ? `'${field}', NEW."${field}"` : `plant."${field}"`);
    });
  }
});
