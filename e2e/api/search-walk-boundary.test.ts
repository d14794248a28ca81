/**
 * Where a capped walk stops, at its edges (walks.ts, walkSegment): a walk reads exactly the engine's budget of
 * rows (searchWalkBudget: fewer on PostgreSQL) and, when its page is short, stops at the last row it read. Here
 * that row is itself a match, and the view ends right after it or holds exactly the budget before it, so an
 * off-by-one in the budget, in the row found as the stop, or in the direction of the walk shows as a match
 * repeated, skipped, or a stop in the wrong place.
 */
import superjson from 'superjson';
import { beforeAll, describe, expect, it } from 'vitest';

import { searchWalkBudget } from '@/shared/limits';
import type { PlantPage } from '@/shared/plant-table';

import { setupServer } from '@test-support/api-fixture';
import { insertPlantsOf } from '@test-support/database';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
let token: string;
let budget: number;

/** Enough matches in the store that a search for "needle" walks (the filter plan), on either engine. */
const NEEDLES = 25_000;
const NEEDLE_BASE = 1_000_000n;
const needleId = (index: number) => NEEDLE_BASE + BigInt(index);
/** The match that is the budget-th row by name: after every filler, before every other needle. */
const EDGE_ID = 900_000n;
const fillerName = (index: number) => `aaa filler ${String(index).padStart(6, '0')}`;
const byName = { key: 'name', dir: 'asc' } as const;

async function page(input: Record<string, unknown>): Promise<PlantPage> {
  const response = await server.rawClient(token).get(`/api/trpc/plants.page?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`);
  expect(response.status, response.text).toBe(200);
  return superjson.deserialize<PlantPage>((JSON.parse(response.text) as { result: { data: never } }).result.data);
}

const ids = (answer: PlantPage) => answer.rows.map((row) => row.id);

beforeAll(async () => {
  budget = searchWalkBudget(server.database.engine);
  token = (await server.createToken('edge-alice', 'member')).token;
  // By name: budget - 1 fillers, the edge match (the budget-th row), then the other matches.
  await insertPlantsOf(server.database, 'edge-alice', [
    ...Array.from({ length: budget - 1 }, (_, index) => ({ id: BigInt(index + 1), name: fillerName(index + 1) })),
    { id: EDGE_ID, name: 'aab needle edge' },
    ...Array.from({ length: NEEDLES }, (_, index) => ({ id: needleId(index), name: `zz needle ${String(index).padStart(6, '0')}` })),
  ]);
  // The planner's statistics, as autovacuum would have them by now (PostgreSQL chooses the plan by them).
  if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
}, 300_000);

describe('a capped walk whose budget-th row is a match', () => {
  it('shows that match and stops at it, and the next request goes on after it', async () => {
    const first = await page({ size: 25, q: 'needle', sort: byName });
    expect(ids(first)).toEqual([EDGE_ID]);
    // The walk read exactly the budget: the edge match is the last row it read, so it is where the walk stopped.
    expect(first.walkStopped).toEqual({ direction: 'forwards', id: EDGE_ID, key: 'aab needle edge', reached: 'aab needle edge' });
    expect(first.hasNext).toBe(true);
    const onward = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: EDGE_ID, key: 'aab needle edge' }, counts: false });
    // Neither the edge match again nor a match skipped: the next 25 from the first one after it.
    expect(ids(onward)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    expect(onward.walkStopped).toBeNull();
  });

  it('walks backwards over exactly the budget to the first row, and stops there', async () => {
    // Before the first needle after the edge: the edge match, then every filler, the budget in all.
    const previous = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'before', id: needleId(0) } });
    expect(ids(previous)).toEqual([EDGE_ID]);
    expect(previous.walkStopped).toEqual({ direction: 'backwards', id: 1n, key: fillerName(1), reached: fillerName(1) });
    expect(previous.hasNext).toBe(true);
  });

  it('fills its page with the budget-th row, or stops there one match short', async () => {
    // After filler 25 the walk reads fillers 26 to budget - 1, the edge match and needles 0 to 24: its budget-th
    // row is the 26th match, which the page reads to know that more follow. Full: no stop.
    const full = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: 25n, key: fillerName(25) }, counts: false });
    expect(ids(full)).toEqual([EDGE_ID, ...Array.from({ length: 24 }, (_, index) => needleId(index))]);
    expect(full).toMatchObject({ hasNext: true, walkStopped: null });
    // After filler 24 its budget-th row is needle 23, the 25th match: one short of what the page reads, so the
    // walk stops at that match, which the page shows.
    const short = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: 24n, key: fillerName(24) }, counts: false });
    expect(ids(short)).toEqual([EDGE_ID, ...Array.from({ length: 24 }, (_, index) => needleId(index))]);
    expect(short.walkStopped).toMatchObject({ direction: 'forwards', id: needleId(23) });
    expect(short.hasNext).toBe(true);
  });
});
