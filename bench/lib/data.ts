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
      for (let start = from; start < total; start += BATCH) {
        const end = Math.min(total, start + BATCH);
        await insertSeries(start, end - 1, SEED_BASE, SEED_STEP, ownerId);
        onProgress?.(end - from, total - from);
      }
      if (total > from) await client.query('VACUUM ANALYZE "Plant"');
      return Math.max(0, total - from);
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
