/**
 * The triggers the declared plant fields decide (src/tooling/plant-field-triggers.ts), on the suite's engine, as the
 * committed migrations leave them, field by field from the declaration (shared/plants.ts, `plantFields`): a create
 * logs every field for the live feed; a change of any one field alone, or an optional one removed, logs the plant
 * as it is now and moves its owner's list version; a write that changes nothing does neither; a delete logs no field.
 * Written with plain SQL, as psql, sqlite3 or Prisma Studio would: the triggers hold whoever writes the row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { applyMigrations } from '@/server/db/migrate';
import { OPTIONAL_PLANT_FIELDS, type Plant, PLANT_FIELD_NAMES } from '@/shared/plants';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { withEveryField } from '@test-support/plant-fields';

const COLUMNS = PLANT_FIELD_NAMES.map((field) => `"${field}"`).join(', ');
type Logged = { kind: string } & Record<string, unknown>;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await applyMigrations({ databaseUrl: database.url, log: () => {} });
  await database.execute(`INSERT INTO "User" (id, name, role) VALUES (1, 'first owner', 'member'), (2, 'second owner', 'member')`);
});
afterAll(async () => {
  await database?.drop();
});

let seen = 0n;
/** The change log's rows since the last call: each one's kind and declared fields. */
async function logged(): Promise<Logged[]> {
  const rows = await database.query<{ seq: bigint } & Logged>(`SELECT "seq", "kind", ${COLUMNS} FROM "PlantChange" WHERE "seq" > ? ORDER BY "seq"`, [seen]);
  if (rows.length > 0) seen = BigInt(rows.at(-1)!.seq);
  return rows.map(({ seq: _seq, ...row }) => row);
}
/** Each owner's list version (0 before the first). */
async function versions(): Promise<bigint[]> {
  const rows = await database.query<{ ownerId: bigint; version: bigint }>('SELECT "ownerId", "version" FROM "PlantListVersion"');
  return [1n, 2n].map((owner) => rows.find((row) => BigInt(row.ownerId) === owner)?.version ?? 0n);
}
/** The plant as the log holds it: every declared field, NULL where it has none. */
const asLogged = (kind: string, plant: Partial<Plant>): Logged => ({ kind, ...Object.fromEntries(PLANT_FIELD_NAMES.map((field) => [field, plant[field] ?? null])) });

describe(`the change log and the list versions follow every declared field (${testEngine})`, () => {
  it('a create, a change of each field alone, a write that changes nothing, an id change, a move and a delete', async () => {
    const plant = withEveryField(41n);
    await logged();
    await database.execute(`INSERT INTO "Plant" ("id", ${COLUMNS}, "ownerId", "createdAt") VALUES (?, ${PLANT_FIELD_NAMES.map(() => '?').join(', ')}, 1, '2026-01-01 00:00:00')`, [
      plant.id,
      ...PLANT_FIELD_NAMES.map((field) => plant[field]),
    ]);
    expect(await logged()).toEqual([asLogged('created', plant)]);
    let before = await versions();
    expect(before[0]).toBeGreaterThan(0n);

    const current: Partial<Plant> = { ...plant };
    const changes: [string, string | null][] = [
      ...PLANT_FIELD_NAMES.map((field): [string, string] => [field, `${plant[field]} changed`]),
      ...OPTIONAL_PLANT_FIELDS.map((field): [string, null] => [field, null]),
    ];
    for (const [field, value] of changes) {
      await database.execute(`UPDATE "Plant" SET "${field}" = ? WHERE "id" = ?`, [value, plant.id]);
      Object.assign(current, { [field]: value });
      expect(await logged(), `${field} set to ${value}`).toEqual([asLogged('updated', current)]);
      const after = await versions();
      expect(after[0], `${field} set to ${value}`).toBeGreaterThan(before[0]!);
      before = after;
    }

    // Every field written as it is: nothing happened.
    await database.execute(`UPDATE "Plant" SET ${PLANT_FIELD_NAMES.map((field) => `"${field}" = "${field}"`).join(', ')} WHERE "id" = ?`, [plant.id]);
    expect(await logged()).toEqual([]);
    expect(await versions()).toEqual(before);

    // Not a change the feed shows, but one a list does.
    await database.execute(`UPDATE "Plant" SET "id" = 42 WHERE "id" = ?`, [plant.id]);
    expect(await logged()).toEqual([]);
    const renumbered = await versions();
    expect(renumbered[0]).toBeGreaterThan(before[0]!);
    await database.execute(`UPDATE "Plant" SET "ownerId" = 2 WHERE "id" = 42`);
    const moved = await versions();
    expect(moved[0]).toBeGreaterThan(renumbered[0]!);
    expect(moved[1]).toBeGreaterThan(renumbered[1]!);

    await database.execute(`DELETE FROM "Plant" WHERE "id" = 42`);
    expect(await logged()).toEqual([asLogged('deleted', {})]);
    expect((await versions())[1]).toBeGreaterThan(moved[1]!);
  });
});
