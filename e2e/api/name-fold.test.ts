/**
 * The name fold kept by the database, on the suite's engine (docs/api.md, "What `q` matches" and "Kept by the
 * database"): whatever SQL writes a plant — a create or a rename with psql or sqlite3, a folded name set by hand as
 * Prisma Studio would — its folded name is foldForSearch's of its name, so the search finds it by its new name only,
 * the name sort puts it in its place, and the list's ETag moves; a migration folds the names there are; and the
 * search ignores case, accents and invisible characters on both sides.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import fc from 'fast-check';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';
import { applyMigrations } from '@/server/db/migrate';
import { foldForSearch, nameFoldTable } from '@/shared/name-fold';
import { expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { foldName } from '@test-support/fold-names';
import type { ApiClient, ApiResponse } from '@test-support/http-client';
import { trpcRequest } from '@test-support/trpc-client';

const { migrationsDir } = engineLayouts[testEngine];
const silent = () => {};

const databases: TestDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});
async function migratedDatabase(dir = migrationsDir): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  await applyMigrations({ databaseUrl: database.url, migrationsDir: dir, log: silent });
  return database;
}

/** One multi-row INSERT of plants of owner 1 with the folded names given (NULL for none). */
async function insertRows(database: TestDatabase, rows: { id: number; name: string; nameFolded: string | null }[]): Promise<void> {
  if (rows.length === 0) return;
  await database.execute(
    `INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") VALUES ${rows.map(() => '(?, ?, ?, 1, ?)').join(', ')}`,
    rows.flatMap((row) => [row.id, row.name, row.nameFolded, '2026-01-01 00:00:00']),
  );
}

const storedFolds = async (database: TestDatabase) =>
  (await database.query<{ name: string; nameFolded: string | null }>('SELECT name, "nameFolded" FROM "Plant" ORDER BY id')).map((row) => [row.name, row.nameFolded]);

describe(`the database folds every name as the app does (${testEngine})`, () => {
  it('whoever writes the row: an INSERT with the fold, none or another, a rename, a folded name set by hand', { timeout: 300_000 }, async () => {
    const database = await migratedDatabase();
    await database.execute(`INSERT INTO "User" (id, name, role) VALUES (1, 'fold-owner', 'member')`);
    let next = 1;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(foldName(), foldName(), fc.nat(2)), { minLength: 1, maxLength: 20 }), async (plants) => {
        const rows = plants.map(([name, , how]) => ({ id: next++, name, nameFolded: [foldForSearch(name), null, 'wrong'][how]! }));
        await insertRows(database, rows);
        // Renamed by SQL, and a folded name set by hand, each one statement as psql or Prisma Studio would send it.
        const renamed = rows.filter((_, index) => plants[index]![2] !== 0);
        if (renamed.length > 0) {
          await database.execute(
            `UPDATE "Plant" SET name = CASE id ${renamed.map(() => 'WHEN ? THEN ?').join(' ')} END WHERE id IN (${renamed.map(() => '?').join(', ')})`,
            [...renamed.flatMap((row) => [row.id, plants[rows.indexOf(row)]![1]]), ...renamed.map((row) => row.id)],
          );
        }
        await database.execute(`UPDATE "Plant" SET "nameFolded" = 'set by hand' WHERE id = ?`, [rows[0]!.id]);
        for (const [name, nameFolded] of await storedFolds(database)) expect(nameFolded, JSON.stringify(name)).toBe(foldForSearch(name as string));
      }),
      { numRuns: 25 },
    );
  });

  it('3,000 generated names written without their fold', async () => {
    const database = await migratedDatabase();
    await database.execute(`INSERT INTO "User" (id, name, role) VALUES (1, 'fold-owner', 'member')`);
    const names = fc.sample(foldName(60), { numRuns: 3_000, seed: 35 });
    for (let at = 0; at < names.length; at += 500) await insertRows(database, names.slice(at, at + 500).map((name, index) => ({ id: at + index + 1, name, nameFolded: null })));
    expect((await storedFolds(database)).map(([, nameFolded]) => nameFolded)).toEqual(names.map(foldForSearch));
  });

  it('every code point of the table, between two letters', async () => {
    // The property test above samples the table; this holds all of it (12,100 code points) on the suite's engine:
    // a key that reached one database's copy wrongly (a jsonb escape, a character SQLite reads as another) shows here.
    const database = await migratedDatabase();
    await database.execute(`INSERT INTO "User" (id, name, role) VALUES (1, 'fold-owner', 'member')`);
    const names = [...nameFoldTable().keys()].filter((codePoint) => codePoint !== 0).map((codePoint) => `a${String.fromCodePoint(codePoint)}b`);
    for (let at = 0; at < names.length; at += 500) await insertRows(database, names.slice(at, at + 500).map((name, index) => ({ id: at + index + 1, name, nameFolded: null })));
    const stored = await storedFolds(database);
    const wrong = stored.filter(([name, nameFolded]) => nameFolded !== foldForSearch(name as string));
    expect(stored).toHaveLength(names.length);
    expect(wrong.slice(0, 10).map(([name, nameFolded]) => [[...(name as string)][1]!.codePointAt(0)!.toString(16), nameFolded])).toEqual([]);
  });

  it('a migration folds the names there are by the new table', async () => {
    const committed = fs.readdirSync(migrationsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    const foldMigration = committed.findIndex((name) => name.endsWith('_plant_name_fold_in_the_database'));
    const before = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-fold-migrations-'));
    try {
      for (const name of committed.slice(0, foldMigration)) fs.cpSync(path.join(migrationsDir, name), path.join(before, name), { recursive: true });
      fs.copyFileSync(path.join(migrationsDir, 'migration_lock.toml'), path.join(before, 'migration_lock.toml'));
      const database = await migratedDatabase(before);
      await database.execute(`INSERT INTO "User" (id, name, role) VALUES (1, 'fold-owner', 'member')`);
      // As the app folded names then (NFKC, case), and rows older than the folded name itself.
      await insertRows(database, [
        { id: 1, name: 'Café Crème', nameFolded: 'café crème' },
        { id: 2, name: 'fern\u200B hidden', nameFolded: 'fern\u200B hidden' },
        { id: 3, name: 'Plain fern', nameFolded: 'plain fern' },
        { id: 4, name: 'Ünfolded', nameFolded: null },
      ]);
      expect((await applyMigrations({ databaseUrl: database.url, log: silent })).applied).toEqual(committed.slice(foldMigration));
      expect(await storedFolds(database)).toEqual([
        ['Café Crème', 'cafe creme'],
        ['fern\u200B hidden', 'fern hidden'],
        ['Plain fern', 'plain fern'],
        ['Ünfolded', 'unfolded'],
      ]);
      if (testEngine === 'sqlite') {
        // The trigram index holds the new folds, and no longer the old.
        const matching = async (phrase: string) => (await database.query<{ id: bigint }>(`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ?`, [`"${phrase}"`])).map((row) => row.id);
        expect(await matching('cafe cr')).toEqual([1n]);
        expect(await matching('café')).toEqual([]);
        expect(await matching('fern hid')).toEqual([2n]);
        expect(await matching('unfold')).toEqual([4n]);
      }
    } finally {
      fs.rmSync(before, { recursive: true, force: true });
    }
  });
});

describe(`the search over HTTP, after writes made outside the app (${testEngine})`, () => {
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
  let alice: ApiClient;
  let aliceToken: string;

  const found = async (q: string) => {
    const response = await alice.get(`/api/plants?q=${encodeURIComponent(q)}`);
    expect(response.status, q).toBe(200);
    return (response.json as { id: bigint }[]).map((plant) => plant.id);
  };
  const byName = async () => {
    const input = { size: 25, sort: { key: 'name', dir: 'asc' } };
    const response = await trpcRequest(server.baseUrl, 'plants.page', { token: aliceToken, query: `input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}` });
    expect(response.status).toBe(200);
    return superjson.deserialize<{ rows: { id: bigint }[] }>(((await response.json()) as { result: { data: never } }).result.data).rows.map((row) => row.id);
  };
  const etagOf = (response: ApiResponse) => response.headers.get('etag')!;

  beforeAll(async () => {
    aliceToken = (await server.createToken('fold-alice', 'member')).token;
    alice = server.client(aliceToken);
    const plants: [bigint, string][] = [
      [777n, 'Alpha one'],
      [778n, 'Beta'],
      [779n, 'Gamma'],
      [780n, 'Café crème'],
      [781n, 'CAFE\u0301 noir'],
      [782n, 'fern\u200B hidden'],
      [783n, 'Fern\u00ADhidden'],
    ];
    for (const [id, name] of plants) expectStatus(await alice.post('/api/plants', plantBody(id, name)), 200);
  });

  it('finds a plant renamed by SQL by its new name only, sorts it by it, and moves the ETag', async () => {
    expect(await found('alpha')).toEqual([777n]);
    const before = await alice.get('/api/plants');
    expect(await byName()).toEqual([777n, 778n, 780n, 781n, 782n, 783n, 779n]);

    expect(await server.database.execute(`UPDATE "Plant" SET name = 'Zeta Orchidée' WHERE id = 777`)).toBe(1);

    expect(await found('orchidee')).toEqual([777n]);
    expect(await found('ORCHIDÉE')).toEqual([777n]);
    expect(await found('zeta')).toEqual([777n]);
    expect(await found('alpha')).toEqual([]);
    expect(await byName()).toEqual([778n, 780n, 781n, 782n, 783n, 779n, 777n]);
    const after = await alice.get('/api/plants', { headers: { 'If-None-Match': etagOf(before) } });
    expect(after.status).toBe(200);
    expect(etagOf(after)).not.toBe(etagOf(before));
  });

  it('puts right a folded name set by hand, as Prisma Studio would write it', async () => {
    await server.database.execute(`UPDATE "Plant" SET "nameFolded" = 'beta' WHERE id = 779`);
    const [row] = await server.database.query<{ nameFolded: string }>('SELECT "nameFolded" FROM "Plant" WHERE id = 779');
    expect(row?.nameFolded).toBe('gamma');
    expect(await found('beta')).toEqual([778n]);
    expect(await found('gamma')).toEqual([779n]);
  });

  it('ignores case and accents on both sides: "cafe" finds "Café"', async () => {
    expect(await found('cafe')).toEqual([780n, 781n]);
    expect(await found('CAFÉ')).toEqual([780n, 781n]);
    expect(await found('cafe\u0301 cr')).toEqual([780n]);
    expect(await found('creme')).toEqual([780n]);
  });

  it('ignores invisible characters on both sides', async () => {
    expect(await found('fern hidden')).toEqual([782n]);
    expect(await found('fernhidden')).toEqual([783n]);
    expect(await found('fe\u200Brn\u2060 \u00A0hid')).toEqual([782n]);
    expect(await found('soft\u00AD')).toEqual([]);
    expect(await found('\u200B')).toEqual([777n, 778n, 779n, 780n, 781n, 782n, 783n]);
  });
});
