import { describe, expect, it } from 'vitest';

import { db, engine } from '@/server/db/client';
import { COMMIT_GROUP_MIN, commitTogether } from '@/server/db/commit-together';
import { actorOf, failureOf, signIn } from '@test-support/actors';

/** The frames in SQLite's write-ahead log: every commit appends the pages it changed. */
async function walFrames(): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ log: number }[]>('PRAGMA wal_checkpoint(PASSIVE)');
  return Number(row!.log);
}

/** Empties the write-ahead log (every page written back to the database file), so frames count from 0. */
async function emptyWal(): Promise<void> {
  await db.$queryRawUnsafe('PRAGMA wal_checkpoint(TRUNCATE)');
  expect(await walFrames()).toBe(0);
}

describe.runIf(engine === 'sqlite')('creates that arrive together (SQLite)', () => {
  it('share one commit: twenty parallel creates write about the log of a few lone ones, each answered with its own plant', async () => {
    const signedIn = await signIn('commit-together');
    const { caller } = signedIn;
    await emptyWal();
    await caller.plants.create({ id: 9_000n, name: 'Alone orchid' });
    const alone = await walFrames();
    expect(alone).toBeGreaterThan(0);

    await emptyWal();
    const ids = Array.from({ length: 20 }, (_, index) => 9_001n + BigInt(index));
    const created = await Promise.all(ids.map((id) => caller.plants.create({ id, name: `Together fern ${id}` })));
    const together = await walFrames();

    expect(created.map((plant) => plant.id)).toEqual(ids);
    expect(created.map((plant) => plant.name)).toEqual(ids.map((id) => `Together fern ${id}`));
    // Twenty commits would append twenty times the pages of one; one commit rewrites each page once.
    expect(together).toBeLessThan(alone * 5);
    // Every row, its search entry and its log row are there.
    expect(await db.plant.count({ where: { id: { in: ids }, ownerId: actorOf(signedIn).userId } })).toBe(20);
    expect((await caller.plants.list({ q: 'together fern', limit: 50 })).map((plant) => plant.id)).toEqual(ids);
    expect(await db.plantChange.count({ where: { plantId: { in: ids }, kind: 'created' } })).toBe(20);
  });

  it('a statement the database refuses fails alone: the others of its group are written and answered', async () => {
    const { userId } = actorOf(await signIn('commit-together-refused'));
    const ids = Array.from({ length: COMMIT_GROUP_MIN + 2 }, (_, index) => 9_101n + BigInt(index));
    const insert = (id: bigint) => () => db.$queryRaw<{ id: bigint }[]>`INSERT INTO "Plant" ("id", "name", "ownerId", "createdAt") VALUES (${id}, ${`Beside the refused one ${id}`}, ${userId}, ${new Date()}) RETURNING "id"`;
    // In the middle of a group large enough to share a commit: NOT NULL (the row has no name and no owner).
    const statements = ids.map((id) => commitTogether(insert(id)));
    const refused = commitTogether(() => db.$queryRaw<{ id: bigint }[]>`INSERT INTO "Plant" ("id") VALUES (${9_100n}) RETURNING "id"`);
    statements.splice(ids.length / 2, 0, refused);
    const outcomes = await Promise.allSettled(statements);

    const failed = outcomes.splice(ids.length / 2, 1)[0]!;
    expect(failed.status).toBe('rejected');
    expect(String((failed as PromiseRejectedResult).reason)).toMatch(/NOT NULL/i);
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value[0]!.id : outcome.reason))).toEqual(ids);
    expect(await db.plant.count({ where: { id: { in: [9_100n, ...ids] } } })).toBe(ids.length);
  });

  it('a taken id in a group is refused alone, the rest of the group written', async () => {
    const { caller } = await signIn('commit-together-taken');
    await caller.plants.create({ id: 9_200n, name: 'Taken' });
    const ids = Array.from({ length: COMMIT_GROUP_MIN + 2 }, (_, index) => 9_201n + BigInt(index));
    const [taken, ...created] = await Promise.all([
      failureOf(caller.plants.create({ id: 9_200n, name: 'Taken again' })),
      ...ids.map((id) => caller.plants.create({ id, name: `New ${id}` })),
    ]);
    expect(taken).toMatchObject({ kind: 'plantIdTaken', field: 'id' });
    expect(created.map((plant) => (plant as { id: bigint }).id)).toEqual(ids);
    expect(await db.plant.findUnique({ where: { id: 9_200n }, select: { name: true } })).toEqual({ name: 'Taken' });
    expect(await db.plant.count({ where: { id: { in: ids } } })).toBe(ids.length);
  });

  it('fewer than COMMIT_GROUP_MIN creates at once each commit alone: no transaction for them', async () => {
    const { caller } = await signIn('commit-together-few');
    await emptyWal();
    await caller.plants.create({ id: 9_300n, name: 'Alone' });
    const alone = await walFrames();
    await emptyWal();
    const ids = Array.from({ length: COMMIT_GROUP_MIN - 1 }, (_, index) => 9_301n + BigInt(index));
    await Promise.all(ids.map((id) => caller.plants.create({ id, name: `Few ${id}` })));
    // Each its own commit: about the log of that many lone creates.
    expect(await walFrames()).toBeGreaterThan(alone * (ids.length - 1));
  });
});
