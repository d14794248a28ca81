import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { engineLayouts, NAME_FOLD_TABLE } from '@/server/db/engines';
import { foldForSearch, nameFoldTable } from '@/shared/name-fold';
import { foldName } from '@test-support/fold-names';

import { latestNameFoldSql, nameFoldSql } from './name-fold-sql';

/**
 * The name fold in the database (name-fold-sql.ts): the migrations hold what the code writes now, and on SQLite the
 * triggers keep every folded name and the trigram index right whatever SQL writes the plant (PostgreSQL's trigger and
 * both engines' agreement with foldForSearch: e2e/api/name-fold.test.ts).
 */

/** A scratch SQLite database with every committed migration applied, as the runner applies them. */
function migratedSqlite(): Database.Database {
  const { migrationsDir } = engineLayouts.sqlite;
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  for (const folder of fs.readdirSync(migrationsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    db.exec(fs.readFileSync(path.join(migrationsDir, folder, 'migration.sql'), 'utf8'));
  }
  db.prepare(`INSERT INTO "User" ("id", "name", "role") VALUES (1, 'owner', 'member')`).run();
  return db;
}

/**
 * What the trigram index holds for each plant, read back from its term list: the text its trigrams spell, in
 * order of their offsets (a plant indexed twice, or not at all, or with another text, shows).
 */
function indexedTexts(db: Database.Database): Map<bigint, string> {
  const rows = db.prepare(`SELECT doc, term, "offset" FROM "PlantNameSearchTerms" ORDER BY doc, "offset"`).all() as { doc: bigint; term: string; offset: bigint }[];
  const texts = new Map<bigint, string>();
  for (const { doc, term } of rows) texts.set(doc, texts.has(doc) ? texts.get(doc)! + [...term].at(-1)! : term);
  return texts;
}

/** What the index should spell for each plant: the folded name and its one U+0001, when that makes a trigram. */
function expectedTexts(db: Database.Database): Map<bigint, string> {
  const rows = db.prepare(`SELECT id, name FROM "Plant"`).all() as { id: bigint; name: string }[];
  return new Map(rows.map((row) => [row.id, `${foldForSearch(row.name)}\u0001`] as const).filter(([, text]) => [...text].length >= 3));
}

describe('the name fold in the migrations', () => {
  for (const engine of ['sqlite', 'postgresql'] as const) {
    it(`ends the latest ${engine} migration that holds it, as name-fold-sql.ts writes it now (else: npm run db:new-migration)`, () => {
      expect(latestNameFoldSql(engineLayouts[engine].migrationsDir)).toBe(nameFoldSql(engine));
    });
  }
});

describe('the name fold kept by SQLite', () => {
  it(`loads the table into "${NAME_FOLD_TABLE}" exactly`, () => {
    const db = migratedSqlite();
    const rows = db.prepare(`SELECT "character", "folded" FROM "${NAME_FOLD_TABLE}"`).all() as { character: string; folded: string }[];
    const loaded = rows.map((row): [number, string] => [row.character.codePointAt(0)!, row.folded]).sort(([a], [b]) => a - b);
    expect(rows.every((row) => [...row.character].length === 1)).toBe(true);
    expect(loaded).toEqual([...nameFoldTable()]);
  });

  // ~2–5 s alone, longer beside the whole suite.
  it('keeps every folded name and the trigram index right, whatever SQL writes the plant', { timeout: 60_000 }, () => {
    const db = migratedSqlite();
    const insert = db.prepare(`INSERT INTO "Plant" ("id", "name", "nameFolded", "ownerId", "createdAt") VALUES (?, ?, ?, 1, '2026-01-01')`);
    const rename = db.prepare(`UPDATE "Plant" SET "name" = ? WHERE "id" = ?`);
    const setFolded = db.prepare(`UPDATE "Plant" SET "nameFolded" = ? WHERE "id" = ?`);
    const move = db.prepare(`UPDATE "Plant" SET "id" = ?, "name" = ?, "nameFolded" = ? WHERE "id" = ?`);
    let next = 1n;
    fc.assert(
      fc.property(fc.array(fc.tuple(foldName(), foldName(), fc.nat(3)), { minLength: 1, maxLength: 8 }), (plants) => {
        for (const [name, renamed, how] of plants) {
          const id = next++;
          // As the app writes it, as Prisma Studio or a script might (none, or a wrong one), and as an old fold did.
          insert.run(id, name, [foldForSearch(name), null, 'wrong', name.toLowerCase()][how]);
          if (how === 1) rename.run(renamed, id);
          if (how === 2) setFolded.run(foldForSearch(renamed), id);
          if (how === 3) move.run(id + 1_000_000n, renamed, 'stale', id);
        }
        const stored = db.prepare(`SELECT "name", "nameFolded" FROM "Plant"`).all() as { name: string; nameFolded: string }[];
        for (const { name, nameFolded } of stored) expect(nameFolded, JSON.stringify(name)).toBe(foldForSearch(name));
        expect(indexedTexts(db)).toEqual(expectedTexts(db));
      }),
      { numRuns: 100 },
    );
  });
});
