import { describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';

import { actorOf, signIn } from '@test-support/actors';

import { countExpiredTombstones, EXPIRED_COUNTED_UP_TO, expireTombstones, startTombstoneExpiry, UNDO_WINDOW_MS } from './undo';

/** Tombstones of `ownerId`'s plants deleted `agoMs` ago, ids from `firstId`, written as a bulk delete writes them. */
async function tombstones(ownerId: number, firstId: number, count: number, agoMs: number): Promise<void> {
  await db.$executeRawUnsafe(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${count - 1})
     INSERT INTO "PlantTombstone" (id, name, tag, "ownerId", "createdAt", "deletedById", "deletedAtMs")
     SELECT ${firstId} + i, 'Kept ' || i, NULL, ${ownerId}, '2026-01-01T00:00:00.000+00:00', ${ownerId}, ${Date.now() - agoMs} - i FROM n`,
  );
}

/** This process's CPU time, user and system (ms). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

describe("undo's tombstones", () => {
  it('expire oldest first, a slice at a time, only past their window', async () => {
    const owner = actorOf(await signIn('expiry-slice'));
    // The nth of them deleted n ms before the first: the higher the id, the older.
    await tombstones(owner.userId, 8_000_000, 1_000, UNDO_WINDOW_MS + 60_000);
    await tombstones(owner.userId, 8_100_000, 10, 1_000);
    // 256 a slice within a few milliseconds of CPU (the least of three: a busy machine); the job sizes its slices
    // from what they take (background/slices.ts).
    const slices: number[] = [];
    for (let slice = 0; slice < 3; slice++) {
      const before = cpuMs();
      expect(await expireTombstones(256)).toEqual({ done: 256, more: true });
      slices.push(cpuMs() - before);
    }
    console.log(`[undo] 256 expired tombstones a slice: ${slices.map((ms) => ms.toFixed(1)).join(', ')} ms of CPU`);
    expect(Math.min(...slices), 'CPU of a slice (ms)').toBeLessThan(10);
    // The oldest went first: the newest 232 of the expired are left, and every one still in its window.
    const left = await db.plantTombstone.findMany({ where: { deletedById: owner.userId }, orderBy: { id: 'asc' }, select: { id: true } });
    expect(left.map((row) => Number(row.id))).toEqual([
      ...Array.from({ length: 1_000 - 3 * 256 }, (_, index) => 8_000_000 + index),
      ...Array.from({ length: 10 }, (_, index) => 8_100_000 + index),
    ]);
    expect(await expireTombstones(256)).toEqual({ done: 232, more: false });
  });

  it('expire on a timer of their own, no delete or restore needed, whatever the backlog; the backlog is counted', { timeout: 60_000 }, async () => {
    const owner = actorOf(await signIn('expiry-owner'));
    // A backlog as 40 bulk deletes of 500 kept for undo leave it, past their window, and some still in it.
    await tombstones(owner.userId, 9_000_000, 20_000, UNDO_WINDOW_MS + 60_000);
    await tombstones(owner.userId, 9_100_000, 50, 1_000);
    expect(await countExpiredTombstones()).toBe(EXPIRED_COUNTED_UP_TO);
    const expiry = startTombstoneExpiry({ everyMs: 60_000, onError: (error) => expect.fail(String(error)) });
    try {
      for (let waited = 0; (await countExpiredTombstones()) > 0; waited += 50) {
        expect(waited, 'the expiry catches up within 30 s').toBeLessThan(30_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await expiry.stop();
    }
    expect(await db.plantTombstone.count({ where: { deletedById: owner.userId } })).toBe(50);
  });
});
