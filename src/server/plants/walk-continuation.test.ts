import { describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';
import { actorOf, signIn } from '@test-support/actors';
import { insertPlantRows } from '@test-support/plant-rows';
import { SEARCH_WALK_BUDGET } from '@/shared/limits';

import { indexedMatchesMax } from './search';

/** The unit tests' engine is SQLite: its cap. */
const INDEXED_MATCHES_MAX = indexedMatchesMax();

/**
 * A page whose walk stopped goes on from the row it stopped at (walkStopped.id), whose place is read again from
 * the database. That row is not a match: anyone may rename it between the two requests, and the walk must still
 * go on from where it stopped, neither repeating the matches it found nor skipping the ones after it.
 */
const filler = (index: number) => `m filler ${String(index).padStart(6, '0')}`;
const byName = { key: 'name', dir: 'asc' } as const;

describe('a walk that goes on after the row it stopped at was renamed', () => {
  it('neither repeats the matches before it nor skips those after it', async () => {
    const member = await signIn('walk-continuation-rename');
    const { userId } = actorOf(member);
    const fillers = SEARCH_WALK_BUDGET + 500;
    const early = Array.from({ length: 5 }, (_, k) => ({ id: 900_000n + BigInt(k), name: `${filler(10 + k)} needle` }));
    const late = Array.from({ length: 5 }, (_, k) => ({ id: 910_000n + BigInt(k), name: `${filler(fillers - 100 + k)} needle` }));
    await insertPlantRows(userId, [
      ...Array.from({ length: fillers }, (_, index) => ({ id: BigInt(index + 1), name: filler(index + 1) })),
      ...early,
      ...late,
      // Enough matches elsewhere that the search walks (the filter plan).
      ...Array.from({ length: INDEXED_MATCHES_MAX + 100 }, (_, k) => ({ id: 2_000_000n + BigInt(k), name: `zz needle ${String(k).padStart(5, '0')}` })),
    ]);

    const first = await member.caller.plants.page({ size: 25, q: 'needle', sort: byName });
    expect(first.rows.map((row) => row.id)).toEqual(early.map((row) => row.id));
    const { id: stopped, key } = first.walkStopped!;
    // As the page goes on: from the place the server held (walked-page.ts, continuationOf).
    const onward = () => member.caller.plants.page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: stopped, key }, counts: false });

    // Renamed to sort first: the walk starts over and the page would show the early matches twice.
    await db.$executeRawUnsafe(`UPDATE "Plant" SET name = 'a', "nameFolded" = 'a' WHERE id = ?`, stopped);
    const repeated = await onward();
    expect(repeated.rows.map((row) => row.id)).not.toContain(early[0]!.id);
    expect(repeated.rows.slice(0, 5).map((row) => row.id)).toEqual(late.map((row) => row.id));

    // Renamed to sort last: the walk finds the end of the order, and the late matches are never shown.
    await db.$executeRawUnsafe(`UPDATE "Plant" SET name = 'zzzz', "nameFolded" = 'zzzz' WHERE id = ?`, stopped);
    const skipped = await onward();
    expect(skipped.rows.slice(0, 5).map((row) => row.id)).toEqual(late.map((row) => row.id));

    // Deleted: the walk still goes on from its place (not the first page, which would show the early matches again).
    await db.$executeRawUnsafe(`DELETE FROM "Plant" WHERE id = ?`, stopped);
    const gone = await onward();
    expect(gone.cursor).toMatchObject({ kind: 'after', id: stopped });
    expect(gone.rows.slice(0, 5).map((row) => row.id)).toEqual(late.map((row) => row.id));

    // Backwards likewise: the page before the late matches stops on the way back, and goes on from there.
    const previous = await member.caller.plants.page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'before', id: late[0]!.id } });
    expect(previous.walkStopped).toMatchObject({ direction: 'backwards' });
    const back = previous.walkStopped!;
    await db.$executeRawUnsafe(`UPDATE "Plant" SET name = 'zzzzz', "nameFolded" = 'zzzzz' WHERE id = ?`, back.id);
    const further = await member.caller.plants.page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'before', id: back.id, key: back.key } });
    expect(further.rows.map((row) => row.id)).toEqual(early.map((row) => row.id));
    await db.$executeRawUnsafe(`DELETE FROM "Plant" WHERE id = ?`, back.id);
    const furtherStill = await member.caller.plants.page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'before', id: back.id, key: back.key } });
    expect(furtherStill.rows.map((row) => row.id)).toEqual(early.map((row) => row.id));
  }, 300_000);

  it("refuses a key that does not fit the sort's column", async () => {
    const member = await signIn('walk-continuation-keys');
    const page = (sort: { key: 'id' | 'name' | 'tag' | 'owner' | 'created'; dir: 'asc' }, key: string | Date | null) =>
      member.caller.plants.page({ size: 25, q: 'needle', sort, cursor: { kind: 'after', id: 1n, key } });
    await expect(page(byName, new Date())).rejects.toThrow(/key/);
    await expect(page(byName, null)).rejects.toThrow(/key/);
    await expect(page({ key: 'created', dir: 'asc' }, '2026-01-01')).rejects.toThrow(/key/);
    await expect(page({ key: 'id', dir: 'asc' }, 'a')).rejects.toThrow(/key/);
    await expect(page(byName, 'x'.repeat(10_000))).rejects.toThrow();
    await expect(page({ key: 'tag', dir: 'asc' }, null)).resolves.toMatchObject({ cursor: { kind: 'after' } });
    await expect(page({ key: 'created', dir: 'asc' }, new Date())).resolves.toMatchObject({ cursor: { kind: 'after' } });
  });
});
