/**
 * What the name fold's triggers cost a create on SQLite (migration *_plant_name_fold_in_the_database): the app's
 * own INSERT (service.ts: the folded name given, ON CONFLICT DO NOTHING) into two database files, one migrated up to
 * the migration before it and one with every migration, in alternating rounds, with the app's pragmas (WAL,
 * synchronous NORMAL). CPU of this process per insert, each round's pair one after the other, so a slow minute of
 * the machine falls on both; the figures are the mean and the range of the rounds.
 *
 *   npx tsx bench/name-fold-create.ts [--rounds=8] [--inserts=2000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';

import { engineLayouts } from '@/server/db/engines';
import { foldForSearch } from '@/shared/name-fold';

const option = (name: string, fallback: number) => Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const ROUNDS = option('rounds', 8);
const INSERTS = option('inserts', 2_000);

const { migrationsDir } = engineLayouts.sqlite;
const migrations = fs.readdirSync(migrationsDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
const foldAt = migrations.findIndex((name) => name.endsWith('_plant_name_fold_in_the_database'));
if (foldAt < 0) throw new Error('no *_plant_name_fold_in_the_database migration');

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-fold-bench-'));
function database(label: string, upTo: number): Database.Database {
  const db = new Database(path.join(scratch, `${label}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const name of migrations.slice(0, upTo)) db.exec(fs.readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8'));
  db.prepare(`INSERT INTO "User" ("id", "name", "role") VALUES (1, 'bench', 'member')`).run();
  return db;
}

const sides = [
  { label: 'before', db: database('before', foldAt) },
  { label: 'after', db: database('after', migrations.length) },
];
const NAMES = {
  // The bench's create (bench/lib/load.ts): printable ASCII.
  ascii: (id: number) => `Bench plant ${id}`,
  accented: (id: number) => `Orchidée Straße ${id}`,
  long: (id: number) => `${'Ωμέγα '.repeat(32)}${id}`,
};

type Kind = keyof typeof NAMES;
const results: Record<string, number[]> = {};
let nextId = 1;
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? sides : [...sides].reverse();
  for (const kind of Object.keys(NAMES) as Kind[]) {
    for (const { label, db } of order) {
      const insert = db.prepare(`INSERT INTO "Plant" ("id", "name", "tag", "nameFolded", "ownerId", "createdAt") VALUES (?, ?, 'bench', ?, 1, ?) ON CONFLICT ("id") DO NOTHING`);
      const rows = Array.from({ length: INSERTS }, () => {
        const id = nextId++;
        const name = NAMES[kind](id);
        return [id, name, foldForSearch(name), new Date().toISOString()] as const;
      });
      const started = process.cpuUsage();
      for (const row of rows) insert.run(...row);
      const used = process.cpuUsage(started);
      (results[`${kind} ${label}`] ??= []).push((used.user + used.system) / INSERTS);
    }
  }
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
console.log(`| name | before µs/insert (range) | after µs/insert (range) | after − before (per-round range) |`);
console.log(`|---|---|---|---|`);
for (const kind of Object.keys(NAMES) as Kind[]) {
  const before = results[`${kind} before`]!;
  const after = results[`${kind} after`]!;
  const differences = after.map((value, index) => value - before[index]!);
  const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  console.log(`| ${kind} | ${mean(before).toFixed(1)} (${range(before)}) | ${mean(after).toFixed(1)} (${range(after)}) | ${mean(differences).toFixed(1)} (${range(differences)}) |`);
}
console.log(`${ROUNDS} rounds × ${INSERTS} inserts per side and name; load ${os.loadavg().map((load) => load.toFixed(1)).join(' ')}`);
for (const { db } of sides) db.close();
fs.rmSync(scratch, { recursive: true, force: true });
