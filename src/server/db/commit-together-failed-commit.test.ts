import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { db, engine } from '@/server/db/client';
import { COMMIT_GROUP_MIN, commitTogether } from '@/server/db/commit-together';
import { databaseFilePath } from '@/server/db/migrate-sqlite';
import { actorOf, signIn } from '@test-support/actors';

/**
 * A failed group is undone whole before its statements run again alone (commit-together.ts). When a statement
 * fails, Prisma sends ROLLBACK; when the COMMIT fails, Prisma's better-sqlite3 adapter only calls `rollback()`,
 * which unlocks its mutex and sends nothing, and SQLite may keep the transaction open (a COMMIT refused by a
 * deferred foreign key, or SQLITE_BUSY at COMMIT outside WAL). db/sqlite-isolation.ts ends such a transaction before its
 * lock lets another statement run; without that, the fallback's lone statements ran inside it: answered, never
 * committed, and a plant of the group "taken" by its own uncommitted row.
 *
 * The COMMIT failure is made here with a deferred foreign key (PRAGMA defer_foreign_keys inside the group), the
 * one way to make SQLite refuse a COMMIT and keep the transaction on a WAL file from inside one process.
 */
describe.runIf(engine === 'sqlite')('a group whose COMMIT fails', () => {
  const committed = () => {
    const reader = new Database(databaseFilePath(process.env.DATABASE_URL!), { readonly: true });
    try {
      return (reader.prepare('SELECT id FROM "Plant" WHERE id >= 9500 AND id < 9700 ORDER BY id').safeIntegers(true).pluck().all() as bigint[]);
    } finally {
      reader.close();
    }
  };

  afterAll(async () => {
    // Leave the file's one connection usable for nothing else: end whatever the failed group left open.
    await db.$executeRawUnsafe('ROLLBACK').catch(() => {});
  });

  it('leaves no transaction open: the fallback commits each create alone, and only the refused one fails', async () => {
    const { userId } = actorOf(await signIn('commit-together-failed-commit'));
    const ids = Array.from({ length: COMMIT_GROUP_MIN }, (_, index) => 9_500n + BigInt(index));
    const insert = (id: bigint, ownerId: number) => () =>
      db.$executeRaw`INSERT INTO "Plant" ("id", "name", "ownerId", "createdAt") VALUES (${id}, ${`Fern ${id}`}, ${ownerId}, ${new Date()}) ON CONFLICT ("id") DO NOTHING`;
    const deferForeignKeys = commitTogether(() => db.$executeRawUnsafe('PRAGMA defer_foreign_keys = ON'));
    const creates = ids.map((id) => commitTogether(insert(id, userId)));
    // No such user: refused at COMMIT, the foreign key being deferred.
    const orphan = commitTogether(insert(9_600n, 2_000_000_000));
    const [, ...outcomes] = await Promise.allSettled([deferForeignKeys, ...creates, orphan]);
    const orphanOutcome = outcomes.pop()!;

    // Each create's own outcome: written (1), as the statement alone would have.
    expect.soft(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : String(outcome.reason)))).toEqual(ids.map(() => 1));
    expect.soft(orphanOutcome.status).toBe('rejected');
    // And committed: another connection sees every acknowledged row.
    expect.soft(committed()).toEqual(ids);
    // The connection takes transactions again.
    await expect(db.$transaction([db.$queryRaw`SELECT 1`])).resolves.toBeDefined();
  });
});
