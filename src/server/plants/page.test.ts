import { describe, expect, it } from 'vitest';

import { signIn } from '@test-support/actors';
import { insertPlantRows } from '@test-support/plant-rows';

import { COUNT_WALK_BUDGET } from './query';
import { INDEXED_MATCHES_MAX } from './search';

/**
 * The admin table's counts where they are not exact. A search of many matches is counted by a capped walk
 * of the member's rows in whatever order the database reads them (on SQLite the covering name index), while
 * the page walks by id: the walk's count can miss the very rows the page shows.
 */
describe("the admin table's inexact total", () => {
  it('is never below the rows the page shows, and one more when another page follows', async () => {
    const member = await signIn('page-inexact-total');
    const { auth } = member.context;
    if (auth.status !== 'signedIn') throw new Error('not signed in');
    const matches = INDEXED_MATCHES_MAX + 1;
    // The matches come first by id and last by name; the walk's budget of rows that sort before them by
    // name holds none.
    await insertPlantRows(auth.actor.userId, Array.from({ length: matches }, (_, i) => ({ id: BigInt(1 + i), name: `zvy ${i}` })));
    await insertPlantRows(auth.actor.userId, Array.from({ length: COUNT_WALK_BUDGET }, (_, i) => ({ id: BigInt(1_000_000 + i), name: `aloe ${i}` })));

    const page = await member.caller.plants.page({ size: 25, q: 'vy' });
    expect(page.rows.map((row) => row.name)).toEqual(Array.from({ length: 25 }, (_, i) => `zvy ${i}`));
    expect(page.hasNext).toBe(true);
    expect(page.totalExact).toBe(false);
    expect(page.total).toBeGreaterThanOrEqual(26);

    const next = await member.caller.plants.page({ size: 25, q: 'vy', cursor: { kind: 'after', id: page.rows.at(-1)!.id } });
    expect(next.rows).toHaveLength(25);
    expect(next.total).toBeGreaterThanOrEqual(next.offset + 25 + 1);
  }, 60_000);
});
