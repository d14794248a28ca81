/**
 * The benchmark's rows, written straight into the SQLite file with better-sqlite3 (one transaction per
 * batch), while the servers idle between runs. Every id is above 2^53, so both servers take their exact
 * int64 paths on every row.
 *
 *   seeded plants   SEED_BASE + i * 1000      (i = 0, 1, …: listed by the list workloads, in id order)
 *   delete pools    DELETE_BASE + run * 2^32 + i
 *   created plants  CREATE_BASE + counter
 */
import Database from 'better-sqlite3';

export const SEED_BASE = 2n ** 62n;
export const SEED_STEP = 1000n;
export const DELETE_BASE = 2n ** 62n + 2n ** 60n;
export const CREATE_BASE = 2n ** 62n + 2n ** 61n;

const TAGS = ['tropical', 'succulent', 'fern', null] as const;
const now = () => new Date().toISOString().replace('Z', '+00:00');

export type BenchDb = ReturnType<typeof openBenchDb>;

export function openBenchDb(file: string) {
  const db = new Database(file, { timeout: 10_000 });
  db.defaultSafeIntegers(true);
  const insert = db.prepare<[bigint, string, string | null, number, string]>(
    `INSERT INTO "Plant" (id, name, tag, ownerId, createdAt) VALUES (?, ?, ?, ?, ?)`,
  );
  const insertMany = db.transaction((ownerId: number, ids: Iterable<bigint>) => {
    const createdAt = now();
    let count = 0;
    for (const id of ids) {
      insert.run(id, `Plant ${id % 1_000_000n}`, TAGS[Number(id % 4n)] ?? null, ownerId, createdAt);
      count++;
    }
    return count;
  });

  return {
    userId(name: string): number {
      const row = db.prepare<[string], { id: bigint }>(`SELECT id FROM "User" WHERE name = ?`).get(name);
      if (!row) throw new Error(`no user ${name} in the database`);
      return Number(row.id);
    },
    /** Seeded plants of this owner, i.e. the next free seed index. */
    seededCount(ownerId: number): number {
      const row = db
        .prepare<[number, bigint, bigint], { n: bigint }>(`SELECT count(*) AS n FROM "Plant" WHERE ownerId = ? AND id >= ? AND id < ?`)
        .get(ownerId, SEED_BASE, DELETE_BASE)!;
      return Number(row.n);
    },
    /** Tops the owner's seeded plants up to `total` (ids SEED_BASE + i * SEED_STEP); returns the rows added. */
    seedUpTo(ownerId: number, total: number): number {
      const from = this.seededCount(ownerId);
      const added = insertMany(
        ownerId,
        (function* () {
          for (let i = from; i < total; i++) yield SEED_BASE + BigInt(i) * SEED_STEP;
        })(),
      );
      db.pragma('wal_checkpoint(TRUNCATE)');
      return added;
    },
    /** The id of the seeded plant at this position (0-based). */
    seededId(index: number): bigint {
      return SEED_BASE + BigInt(index) * SEED_STEP;
    },
    insertIds(ownerId: number, ids: bigint[]): void {
      insertMany(ownerId, ids);
    },
    deleteRange(from: bigint, toExclusive: bigint): number {
      const { changes } = db.prepare<[bigint, bigint]>(`DELETE FROM "Plant" WHERE id >= ? AND id < ?`).run(from, toExclusive);
      db.pragma('wal_checkpoint(TRUNCATE)');
      return changes;
    },
    count(): number {
      return Number(db.prepare<[], { n: bigint }>(`SELECT count(*) AS n FROM "Plant"`).get()!.n);
    },
    exists(id: bigint): boolean {
      return db.prepare<[bigint]>(`SELECT 1 FROM "Plant" WHERE id = ?`).get(id) !== undefined;
    },
    close(): void {
      db.close();
    },
  };
}
