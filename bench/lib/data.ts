/**
 * The benchmark's rows, written straight into the database (better-sqlite3 on SQLite, pg on PostgreSQL)
 * while the servers idle between runs. Rows are made by the database itself (`INSERT … SELECT` over a
 * recursive CTE on SQLite, over generate_series on PostgreSQL), in batches (a million on PostgreSQL, 100k on SQLite: see SQLITE_BATCH) with progress,
 * so 10 M plants take seconds to a minute instead of a JS loop's many minutes. Every id is above 2^53, so
 * the servers take their exact-int64 paths on every row. Names are two of twelve plant words and the row's
 * number ("Orchid ivy 4711"), folded for the name search as the service folds them, so a search can match
 * one plant in 12, one in 144, one, or none (the scale phase's searches).
 *
 *   seeded plants   SEED_BASE + i * 1000      (i = 0, 1, …: listed by the list workloads, in id order)
 *   delete pools    DELETE_BASE + run * 2^32 + i
 *   created plants  CREATE_BASE + counter
 */
import { existsSync, statSync } from 'node:fs';

import Database from 'better-sqlite3';
import pg from 'pg';

import { PLANT_FIELD_NAMES } from '@/shared/plants';

export const SEED_BASE = 2n ** 62n;
export const SEED_STEP = 1000n;
export const DELETE_BASE = 2n ** 62n + 2n ** 60n;
export const CREATE_BASE = 2n ** 62n + 2n ** 61n;
const INT64_MAX = 2n ** 63n - 1n;
const BATCH = 1_000_000;
/**
 * SQLite's seeding runs on the bench's own thread (better-sqlite3 is synchronous), so each statement stalls the
 * bench's event loop: a tenth of PostgreSQL's batch, a few seconds each with the trigram index. Between
 * statements the loop takes a turn (`turn()`), in which its HTTP client sees the servers close its idle
 * kept-alive sockets (their keep-alive timeout, 5 s). Without it, seeding 10 M plants was one stall of 5–9
 * minutes: the servers' ends of those sockets were long gone (FIN_WAIT_2 ends after 60 s, and the next
 * TCP keep-alive probe was answered by a reset), the bench did not know, and its first requests after the
 * seeding went out on them: `write EPIPE`, on the retry too (the pool held two such sockets per server).
 */
const SQLITE_BATCH = 100_000;
/** One turn of the event loop: its poll phase runs (sockets' closes and resets are seen) before this resolves. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export type Engine = 'sqlite' | 'postgresql';

export type BenchDb = {
  engine: Engine;
  userId(name: string): Promise<number>;
  /** Tops the owner's seeded plants up to `total` (ids SEED_BASE + i * SEED_STEP); returns the rows added. */
  seedUpTo(ownerId: number, total: number, onProgress?: (done: number, of: number) => void): Promise<number>;
  /** The id of the seeded plant at this position (0-based). */
  seededId(index: number): bigint;
  /** Plants with these names and the ids from, from + 1, … for this owner. */
  insertNamed(ownerId: number, from: bigint, names: readonly string[]): Promise<void>;
  /** `count` plants with the ids from, from + 1, … for this owner (a delete pool). */
  insertRange(ownerId: number, from: bigint, count: number): Promise<void>;
  deleteRange(from: bigint, toExclusive: bigint): Promise<number>;
  /** Every plant the A/B and scale phases made that is not a seeded one. */
  deleteUnseeded(): Promise<number>;
  exists(id: bigint): Promise<boolean>;
  /** Bytes on disk and how they were counted. */
  size(): Promise<{ bytes: number; what: string }>;
  close(): Promise<void>;
};

const seededId = (index: number) => SEED_BASE + BigInt(index) * SEED_STEP;

// The same rows on both engines: a name from the row's number i (see above), a tag picked by id mod 4 (one
// of three, or none). The folded name is what foldForSearch gives for these words (ASCII, and ß as ss).
export const NAME_WORDS = ['Monstera', 'Ficus', 'Fern', 'Palm', 'Aloe', 'Cactus', 'Orchid', 'Begonia', 'Calathea', 'Pothos', 'Straße', 'Ivy'] as const;
const word = (index: string) => `CASE ${index} ${NAME_WORDS.map((name, at) => `WHEN ${at} THEN '${name}'`).join(' ')} END`;
const NAME_SQL = (i: string) => `${word(`(${i}) % 12`)} || ' ' || lower(${word(`((${i}) / 12) % 12`)}) || ' ' || (${i})`;
const FOLDED_SQL = (i: string) => `replace(lower(${NAME_SQL(i)}), 'ß', 'ss')`;
/** The name of the row numbered i, as the SQL above writes it. */
export const nameOf = (i: number) => `${NAME_WORDS[i % 12]} ${NAME_WORDS[Math.floor(i / 12) % 12]!.toLowerCase()} ${i}`;
/**
 * A handful of names holding a character no seeded name has (no NAME_WORDS word has a k): the scale phase
 * inserts them for its one-character search that matches a few plants. ASCII, so folded is lower-cased.
 */
export const RARE_CHARACTER = 'k';
export const RARE_NAMES = ['Kentia palm', 'Kalanchoe', 'Kokedama fern', 'Peperomia kimnachii', 'Kangaroo paw'] as const;
const TAG_SQL = (id: string) => `CASE ${id} % 4 WHEN 0 THEN 'tropical' WHEN 1 THEN 'succulent' WHEN 2 THEN 'fern' ELSE NULL END`;

export function openSqliteBenchDb(file: string): BenchDb {
  const db = new Database(file, { timeout: 10_000 });
  db.defaultSafeIntegers(true);
  // This connection only seeds and cleans up between runs: the servers' own durability is theirs.
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const now = () => new Date().toISOString().replace('Z', '+00:00');
  type Series = { first: bigint; end: bigint; base: bigint; step: bigint; owner: number; at: string };
  const series = db.prepare<[Series]>(
    `WITH RECURSIVE s(i) AS (SELECT @first UNION ALL SELECT i + 1 FROM s WHERE i + 1 < @end)
     INSERT INTO "Plant" (id, name, "nameFolded", tag, ownerId, createdAt)
     SELECT @base + i * @step, ${NAME_SQL('i')}, ${FOLDED_SQL('i')}, ${TAG_SQL('(@base + i * @step)')}, @owner, @at FROM s`,
  );
  const insertSeries = (first: bigint, end: bigint, base: bigint, step: bigint, owner: number, at: string) => series.run({ first, end, base, step, owner, at });
  const countSeeded = db.prepare<[number, bigint, bigint], { n: bigint }>(`SELECT count(*) AS n FROM "Plant" WHERE ownerId = ? AND id >= ? AND id < ?`);
  const deleteBetween = db.prepare<[bigint, bigint]>(`DELETE FROM "Plant" WHERE id >= ? AND id < ?`);
  const checkpoint = () => db.pragma('wal_checkpoint(TRUNCATE)');
  return {
    engine: 'sqlite',
    userId: async (name) => {
      const row = db.prepare<[string], { id: bigint }>(`SELECT id FROM "User" WHERE name = ?`).get(name);
      if (!row) throw new Error(`no user ${name} in the database`);
      return Number(row.id);
    },
    seedUpTo: async (ownerId, total, onProgress) => {
      const from = Number(countSeeded.get(ownerId, SEED_BASE, DELETE_BASE)!.n);
      for (let start = from; start < total; start += SQLITE_BATCH) {
        const end = Math.min(total, start + SQLITE_BATCH);
        insertSeries(BigInt(start), BigInt(end), SEED_BASE, SEED_STEP, ownerId, now());
        checkpoint();
        onProgress?.(end - from, total - from);
        await turn();
      }
      return Math.max(0, total - from);
    },
    seededId,
    // Each of these is followed by requests: the loop turns first (see SQLITE_BATCH).
    insertRange: async (ownerId, from, count) => {
      insertSeries(0n, BigInt(count), from, 1n, ownerId, now());
      await turn();
    },
    insertNamed: async (ownerId, from, names) => {
      const insert = db.prepare<[bigint, string, string, number, string]>(`INSERT INTO "Plant" (id, name, "nameFolded", tag, ownerId, createdAt) VALUES (?, ?, ?, NULL, ?, ?)`);
      db.transaction(() => names.forEach((name, at) => insert.run(from + BigInt(at), name, name.toLowerCase(), ownerId, now())))();
      await turn();
    },
    deleteRange: async (from, toExclusive) => {
      const { changes } = deleteBetween.run(from, toExclusive);
      checkpoint();
      await turn();
      return changes;
    },
    deleteUnseeded: async () => {
      const { changes } = deleteBetween.run(DELETE_BASE, INT64_MAX);
      checkpoint();
      await turn();
      return changes;
    },
    exists: async (id) => db.prepare<[bigint]>(`SELECT 1 FROM "Plant" WHERE id = ?`).get(id) !== undefined,
    size: async () => {
      const files = [file, `${file}-wal`].filter((candidate) => existsSync(candidate));
      return { bytes: files.reduce((total, candidate) => total + statSync(candidate).size, 0), what: 'file + WAL' };
    },
    close: async () => {
      db.close();
    },
  };
}

/**
 * PostgreSQL's seeding with the plant table's insert triggers off, doing their work itself once per batch:
 * they cost most of the seeding (1,029 s for 10 M plants with them, row by row in PL/pgSQL). What they do on
 * an insert (prisma/postgresql/migrations):
 *   Plant_name_folded           each row's "nameFolded" made plant_name_fold("name") before it is written: the
 *                               rows are written with FOLDED_SQL's fold, which bulkSeedingIsExact first holds
 *                               equal to the database's for every pair of words a seeded name is made of;
 *   Plant_change_log            one "created" row in PlantChange (the live feed's log) per plant, holding the
 *                               declared fields: written here from the inserted rows in the same statement, in the
 *                               same order;
 *   Plant_created_list_version  the owner's PlantListVersion + 1 (or 1) once per statement: done here per batch;
 *   Plant_webhook_outbox        one WebhookDelivery per enabled endpoint subscribed to plant.created: with no
 *                               such endpoint it writes nothing, so the bulk path runs only then (bulkSeedingIsExact).
 * All in one transaction per batch: ALTER TABLE … DISABLE TRIGGER is transactional, so a failed batch leaves the
 * triggers on and nothing written. A trigger this list does not know (a new migration) turns the bulk path
 * off with an error rather than skipping its work, and seedUpTo checks the end state either way.
 */
const INSERT_TRIGGERS = ['Plant_change_log', 'Plant_created_list_version', 'Plant_name_folded', 'Plant_webhook_outbox'] as const;
/** The change log's columns for the declared plant fields, as its trigger writes them (src/tooling/plant-field-triggers.ts). */
const FIELD_COLUMNS = PLANT_FIELD_NAMES.map((field) => `"${field}"`).join(', ');

async function bulkSeedingIsExact(client: pg.Client): Promise<boolean> {
  // tgtype bit 2: fires on INSERT (pg_trigger.h's TRIGGER_TYPE_INSERT).
  const triggers = await client.query<{ name: string }>(
    `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = '"Plant"'::regclass AND NOT tgisinternal AND (tgtype & 4) <> 0 ORDER BY tgname`,
  );
  const names = triggers.rows.map((row) => row.name);
  if (JSON.stringify(names) !== JSON.stringify([...INSERT_TRIGGERS].sort())) {
    throw new Error(`the bench's bulk seeding knows the Plant insert triggers ${INSERT_TRIGGERS.join(', ')}; the database has ${names.join(', ')}: teach bench/lib/data.ts what the new ones do`);
  }
  // Row i's name is words i % 12 and (i / 12) % 12 and i's digits: the first 144 rows hold every pair.
  const folds = await client.query<{ name: string; written: string; folded: string }>(
    `SELECT ${NAME_SQL('i')} AS name, ${FOLDED_SQL('i')} AS written, "plant_name_fold"(${NAME_SQL('i')}) AS folded FROM generate_series(0, 143) AS i`,
  );
  const unlike = folds.rows.find((row) => row.written !== row.folded);
  if (unlike) throw new Error(`the bench's bulk seeding folds "${unlike.name}" as "${unlike.written}", the database as "${unlike.folded}": teach FOLDED_SQL the fold`);
  const subscribed = await client.query(`SELECT 1 FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.created,%' LIMIT 1`);
  return subscribed.rowCount === 0;
}

async function insertSeriesBulk(client: pg.Client, first: number, last: number, ownerId: number): Promise<void> {
  const triggers = (verb: 'DISABLE' | 'ENABLE') => `ALTER TABLE "Plant" ${INSERT_TRIGGERS.map((name) => `${verb} TRIGGER "${name}"`).join(', ')}`;
  await client.query('BEGIN');
  try {
    await client.query(triggers('DISABLE'));
    await client.query(
      `WITH plants AS (
         INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
         SELECT $3::bigint + i * $4::bigint, ${NAME_SQL('i')}, ${FOLDED_SQL('i')}, ${TAG_SQL('($3::bigint + i * $4::bigint)')}, $5, now()
           FROM generate_series($1::bigint, $2::bigint) AS i
         RETURNING id, "ownerId", ${FIELD_COLUMNS})
       INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", ${FIELD_COLUMNS}, "atMs")
       SELECT id, "ownerId", 'created', ${FIELD_COLUMNS}, floor(extract(epoch FROM clock_timestamp()) * 1000) FROM plants ORDER BY id`,
      [first, last, SEED_BASE.toString(), SEED_STEP.toString(), ownerId],
    );
    await client.query(
      `INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES ($1, 1)
       ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1`,
      [ownerId],
    );
    await client.query(triggers('ENABLE'));
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

/** What the insert triggers keep, for the seeded ids in [from, to): compared before and after a seeding. */
async function seedingState(client: pg.Client, ownerId: number, from: bigint, to: bigint) {
  const { rows } = await client.query<{ listVersion: string; createdChanges: string; deliveries: string; triggersEnabled: boolean }>(
    `SELECT (SELECT coalesce(max("version"), 0) FROM "PlantListVersion" WHERE "ownerId" = $1) AS "listVersion",
            (SELECT count(*) FROM "PlantChange" WHERE "kind" = 'created' AND "plantId" >= $2 AND "plantId" < $3) AS "createdChanges",
            (SELECT count(*) FROM "WebhookDelivery") AS deliveries,
            (SELECT bool_and(tgenabled = 'O') FROM pg_trigger WHERE tgrelid = '"Plant"'::regclass AND NOT tgisinternal) AS "triggersEnabled"`,
    [ownerId, from.toString(), to.toString()],
  );
  const row = rows[0]!;
  return { listVersion: Number(row.listVersion), createdChanges: Number(row.createdChanges), deliveries: Number(row.deliveries), triggersEnabled: row.triggersEnabled };
}

export async function openPostgresBenchDb(url: string): Promise<BenchDb> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Seeding and clean-up only; the app's connections keep the server's durability.
  await client.query('SET synchronous_commit = off');
  const one = async <Row extends Record<string, unknown>>(sql: string, params: unknown[] = []) => (await client.query<Row>(sql, params)).rows[0];
  // $1 first index, $2 last index, $3 base, $4 step, $5 owner.
  const insertSeries = (first: number, last: number, base: bigint, step: bigint, ownerId: number) =>
    client.query(
      `INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
       SELECT $3::bigint + i * $4::bigint, ${NAME_SQL('i')}, ${FOLDED_SQL('i')}, ${TAG_SQL('($3::bigint + i * $4::bigint)')}, $5, now()
         FROM generate_series($1::bigint, $2::bigint) AS i`,
      [first, last, base.toString(), step.toString(), ownerId],
    );
  return {
    engine: 'postgresql',
    userId: async (name) => {
      const row = await one<{ id: number }>(`SELECT id FROM "User" WHERE name = $1`, [name]);
      if (!row) throw new Error(`no user ${name} in the database`);
      return Number(row.id);
    },
    seedUpTo: async (ownerId, total, onProgress) => {
      const row = await one<{ n: string }>(`SELECT count(*) AS n FROM "Plant" WHERE "ownerId" = $1 AND id >= $2 AND id < $3`, [
        ownerId,
        SEED_BASE.toString(),
        DELETE_BASE.toString(),
      ]);
      const from = Number(row!.n);
      if (from >= total) return 0;
      const bulk = process.env.BENCH_PG_SEED !== 'triggers' && (await bulkSeedingIsExact(client));
      const before = await seedingState(client, ownerId, seededId(from), seededId(total));
      let statements = 0;
      for (let start = from; start < total; start += BATCH) {
        const end = Math.min(total, start + BATCH);
        if (bulk) await insertSeriesBulk(client, start, end - 1, ownerId);
        else await insertSeries(start, end - 1, SEED_BASE, SEED_STEP, ownerId);
        statements += 1;
        onProgress?.(end - from, total - from);
      }
      // Loudly, whichever way the rows went in: the store is as the triggers leave it.
      const after = await seedingState(client, ownerId, seededId(from), seededId(total));
      // The outbox's rows are checked on the bulk path only (none may appear); with the triggers on, an endpoint gets its events.
      const expected = {
        listVersion: before.listVersion + statements,
        createdChanges: before.createdChanges + (total - from),
        deliveries: bulk ? before.deliveries : after.deliveries,
        triggersEnabled: true,
      };
      if (JSON.stringify(after) !== JSON.stringify(expected)) {
        throw new Error(`seeding ${total - from} plants (${bulk ? 'triggers off' : 'triggers on'}) left ${JSON.stringify(after)}, not ${JSON.stringify(expected)}`);
      }
      await client.query('VACUUM ANALYZE "Plant"');
      return total - from;
    },
    seededId,
    insertRange: async (ownerId, from, count) => {
      await insertSeries(0, count - 1, from, 1n, ownerId);
    },
    insertNamed: async (ownerId, from, names) => {
      await client.query(
        `INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
         SELECT $1::bigint + at - 1, name, lower(name), NULL, $3, now() FROM unnest($2::text[]) WITH ORDINALITY AS n(name, at)`,
        [from.toString(), names, ownerId],
      );
    },
    deleteRange: async (from, toExclusive) => (await client.query(`DELETE FROM "Plant" WHERE id >= $1 AND id < $2`, [from.toString(), toExclusive.toString()])).rowCount ?? 0,
    deleteUnseeded: async () => (await client.query(`DELETE FROM "Plant" WHERE id >= $1`, [DELETE_BASE.toString()])).rowCount ?? 0,
    exists: async (id) => (await client.query(`SELECT 1 FROM "Plant" WHERE id = $1`, [id.toString()])).rowCount === 1,
    size: async () => {
      const row = await one<{ bytes: string }>(`SELECT pg_database_size(current_database()) AS bytes`);
      return { bytes: Number(row!.bytes), what: 'pg_database_size' };
    },
    close: async () => {
      await client.end();
    },
  };
}
