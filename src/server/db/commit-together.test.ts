import { describe, expect, it } from 'vitest';

import { db, engine } from '@/server/db/client';
import { commitTogether } from '@/server/db/commit-together';
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
    const { caller } = await signIn('commit-together-refused');
    const refused = commitTogether(() => db.$queryRaw`INSERT INTO "Plant" ("id") VALUES (${9_100n}) RETURNING "id"`);
    const [first, failure, last] = await Promise.all([
      caller.plants.create({ id: 9_101n, name: 'Before the refused one' }),
      refused.then(
        () => undefined,
        (error: unknown) => error,
      ),
      caller.plants.create({ id: 9_102n, name: 'After the refused one' }),
    ]);
    expect(first.id).toBe(9_101n);
    expect(last.id).toBe(9_102n);
    // NOT NULL: the row has no name and no owner.
    expect(String(failure)).toMatch(/NOT NULL|null/i);
    expect(await db.plant.count({ where: { id: { in: [9_100n, 9_101n, 9_102n] } } })).toBe(2);
  });

  it('a taken id in a group is refused alone, the rest of the group written', async () => {
    const { caller } = await signIn('commit-together-taken');
    await caller.plants.create({ id: 9_200n, name: 'Taken' });
    const results = await Promise.all([
      caller.plants.create({ id: 9_201n, name: 'New one' }),
      failureOf(caller.plants.create({ id: 9_200n, name: 'Taken again' })),
      caller.plants.create({ id: 9_202n, name: 'New two' }),
    ]);
    expect(results[1]).toMatchObject({ kind: 'plantIdTaken', field: 'id' });
    expect(await db.plant.findMany({ where: { id: { in: [9_200n, 9_201n, 9_202n] } }, orderBy: { id: 'asc' }, select: { id: true, name: true } })).toEqual([
      { id: 9_200n, name: 'Taken' },
      { id: 9_201n, name: 'New one' },
      { id: 9_202n, name: 'New two' },
    ]);
  });
});
