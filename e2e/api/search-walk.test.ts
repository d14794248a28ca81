/**
 * The admin page's name search of many matches sorted by anything but id walks that order's index and tests
 * each name (no index lists a substring's matches in name order). One request walks at most
 * SEARCH_WALK_BUDGET rows, answers with what it found and where it stopped (`walkStopped`), and the next
 * request goes on from that row (docs/admin-page.md, "At scale"). Here the matches all sort after more rows
 * than one request may walk: the adversarial case, where the walk used to read every row of the view.
 */
import superjson from 'superjson';
import { beforeAll, describe, expect, it } from 'vitest';

import { SEARCH_WALK_BUDGET, searchWalkBudget } from '@/shared/limits';
import type { PlantPage } from '@/shared/plants';

import { setupServer } from '@test-support/api-fixture';
import { insertPlantsOf } from '@test-support/database';

// Rate limits off: this file is about answers (e2e/api/costs.test.ts charges searches).
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
let token: string;
let adminToken: string;
/** The rows one walk reads on this suite's engine (fewer on PostgreSQL). */
let budget: number;

/** Names that sort first and hold no "needle": more of them than one request may walk on either engine. */
const FILLERS = SEARCH_WALK_BUDGET + 500;
/** The matches, all after the fillers by name, by tag and by id: more than the trigram index plan takes on either engine (PostgreSQL decides by its estimate). */
const NEEDLES = 25_000;
const NEEDLE_BASE = 1_000_000n;
const fillerName = (index: number) => `aaa filler ${String(index).padStart(6, '0')}`;
const needleId = (index: number) => NEEDLE_BASE + BigInt(index);

const insertPlants = (owner: string, rows: { id: bigint; name: string; tag?: string }[]) => insertPlantsOf(server.database, owner, rows);

async function page(input: Record<string, unknown>): Promise<PlantPage> {
  // The suite's client, which retries a GET once when the server closes a kept-alive connection as it is
  // reused (the seeding above takes longer than the server's 5 s keep-alive).
  const response = await server.rawClient(token).get(`/api/trpc/plants.page?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`);
  expect(response.status, response.text).toBe(200);
  return superjson.deserialize<PlantPage>((JSON.parse(response.text) as { result: { data: never } }).result.data);
}

const ids = (answer: PlantPage) => answer.rows.map((row) => row.id);
const byName = { key: 'name', dir: 'asc' } as const;

beforeAll(async () => {
  budget = searchWalkBudget(server.database.engine);
  token = (await server.createToken('walk-alice', 'member')).token;
  adminToken = (await server.createToken('walk-admin', 'admin')).token;
  await server.createToken('walk-bob', 'member');
  await insertPlants('walk-alice', [
    ...Array.from({ length: FILLERS }, (_, index) => ({ id: BigInt(index + 1), name: fillerName(index + 1), tag: 'a-filler' })),
    ...Array.from({ length: NEEDLES }, (_, index) => ({ id: needleId(index), name: `zz needle ${String(index).padStart(6, '0')}`, tag: 'z-needle' })),
  ]);
  // The planner's statistics, as autovacuum would have them by now (PostgreSQL chooses the plan by them).
  if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
}, 300_000);

describe('a name search sorted by name, whose matches all sort last', () => {
  it('walks at most the budget per request, says where it stopped, and goes on from there', async () => {
    const first = await page({ size: 25, q: 'needle', sort: byName });
    // The walk read the first budget names (fillers, in id order by name) and found nothing.
    expect(first.rows).toEqual([]);
    expect(first.walkStopped).toEqual({ direction: 'forwards', id: BigInt(budget), key: fillerName(budget), reached: fillerName(budget) });
    expect(first).toMatchObject({ hasNext: true, offset: 0, offsetExact: true, cursor: undefined });
    expect(first.total === 0 && first.totalExact).toBe(false);

    // Going on after the row where it stopped: the last 500 fillers, then the first matches.
    const second = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: first.walkStopped!.id, key: first.walkStopped!.key } });
    expect(ids(second)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    expect(second).toMatchObject({ hasNext: true, offset: 0, walkStopped: null });
    // The same rows without counts, as the admin page asks when it goes on by itself: "at least", never a wrong number.
    const rowsOnly = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: first.walkStopped!.id }, counts: false });
    expect(ids(rowsOnly)).toEqual(ids(second));
    expect(rowsOnly).toMatchObject({ hasNext: true, offset: 0, offsetExact: false, total: 26, totalExact: false, walkStopped: null });
    const third = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'after', id: needleId(24) } });
    expect(ids(third)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(25 + index)));
    expect(third.offset === 25 || !third.offsetExact).toBe(true);
    expect(third.offset).toBeLessThanOrEqual(25);
  });

  it('walks backwards the same way: a previous page stops at the budget too', async () => {
    // Before the first match: every filler, read backwards from the last one.
    const previous = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'before', id: needleId(0) } });
    expect(previous.rows).toEqual([]);
    expect(previous.walkStopped).toEqual({ direction: 'backwards', id: BigInt(FILLERS - budget + 1), key: fillerName(FILLERS - budget + 1), reached: fillerName(FILLERS - budget + 1) });
    // Nothing before the page matched: its place is right, whether or not the count could say so exactly.
    expect(previous.offset).toBe(0);
    // What follows it is the first match, and the page says so.
    expect(previous.hasNext).toBe(true);
  });

  it('leaves descending order, where the matches come first, as it was', async () => {
    const descending = await page({ size: 25, q: 'needle', sort: { key: 'name', dir: 'desc' } });
    expect(ids(descending)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(NEEDLES - 1 - index)));
    expect(descending).toMatchObject({ hasNext: true, walkStopped: null });
    // The last page in that order reads backwards from the end of the name order: the matches again.
    const last = await page({ size: 25, q: 'needle', sort: byName, cursor: { kind: 'last' } });
    expect(ids(last)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(NEEDLES - 25 + index)));
    expect(last).toMatchObject({ hasNext: false, walkStopped: null });
  });

  it('caps the walk in every order that tests names: tag, owner and creation time', async () => {
    const byTag = await page({ size: 25, q: 'needle', sort: { key: 'tag', dir: 'asc' } });
    expect(byTag).toMatchObject({ rows: [], hasNext: true, walkStopped: { direction: 'forwards', id: BigInt(budget), reached: 'a-filler' } });
    const onward = await page({ size: 25, q: 'needle', sort: { key: 'tag', dir: 'asc' }, cursor: { kind: 'after', id: byTag.walkStopped!.id, key: byTag.walkStopped!.key } });
    expect(ids(onward)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    for (const key of ['owner', 'created'] as const) {
      const answer = await page({ size: 25, q: 'needle', sort: { key, dir: 'asc' } });
      expect(answer, key).toMatchObject({ rows: [], hasNext: true, walkStopped: { direction: 'forwards', id: BigInt(budget) } });
      // How far it got, as the page shows it: the owner's name, or the creation time as an ISO time.
      if (key === 'owner') expect(answer.walkStopped!.reached).toBe('walk-alice');
      else expect(answer.walkStopped!.reached).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The place it sends back is of the order's type (a name, a time), and the walk goes on from it on either engine.
      const { id, key: at } = answer.walkStopped!;
      expect(at, key).toEqual(key === 'owner' ? 'walk-alice' : new Date(answer.walkStopped!.reached!));
      const further = await page({ size: 25, q: 'needle', sort: { key, dir: 'asc' }, cursor: { kind: 'after', id, key: at } });
      expect(ids(further), key).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    }
  });

  it('counts every row it reads against the budget: a tag filter no order index covers is tested beside the name', async () => {
    // No index holds (tag, name) or (tag, created): the walk reads the view in that order, and each row it reads
    // (a filler of another tag too) counts, so it stops where the search without the filter stops.
    for (const key of ['name', 'created'] as const) {
      const tagged = await page({ size: 25, q: 'needle', tag: 'z-needle', sort: { key, dir: 'asc' } });
      expect(tagged, key).toMatchObject({ rows: [], hasNext: true, walkStopped: { direction: 'forwards', id: BigInt(budget) } });
      const { id, key: at } = tagged.walkStopped!;
      const further = await page({ size: 25, q: 'needle', tag: 'z-needle', sort: { key, dir: 'asc' }, cursor: { kind: 'after', id, key: at }, counts: false });
      expect(ids(further), key).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    }
    // By tag, the tag's index holds the filter: the walk reads only that tag's rows, the matches first.
    const byTag = await page({ size: 25, q: 'needle', tag: 'z-needle', sort: { key: 'tag', dir: 'asc' } });
    expect(ids(byTag)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    expect(byTag.walkStopped).toBeNull();
  });

  it("keeps the owner filter in the walk, which the (owner, key) indexes hold: another owner's rows cost nothing", async () => {
    // Another owner's plants that sort before every filler: an admin's walk of walk-alice's plants never reads them.
    await insertPlants('walk-bob', Array.from({ length: 100 }, (_, index) => ({ id: 5_000_000n + BigInt(index), name: `aaa ${String(index).padStart(3, '0')}`, tag: 'a-filler' })));
    if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
    const admin = token;
    token = adminToken;
    try {
      const owned = await page({ size: 25, q: 'needle', owner: 'walk-alice', sort: byName });
      expect(owned).toMatchObject({ rows: [], walkStopped: { direction: 'forwards', id: BigInt(budget) } });
      // Without the filter the admin's walk reads bob's plants too, and stops 100 names earlier.
      const everyone = await page({ size: 25, q: 'needle', sort: byName });
      expect(everyone).toMatchObject({ rows: [], walkStopped: { direction: 'forwards', id: BigInt(budget - 100) } });
    } finally {
      token = admin;
    }
  });

  it('leaves id order and searches of few matches as they were', async () => {
    const byId = await page({ size: 25, q: 'needle' });
    expect(ids(byId)).toEqual(Array.from({ length: 25 }, (_, index) => needleId(index)));
    expect(byId.walkStopped).toBeNull();
    const few = await page({ size: 25, q: 'needle 00001', sort: byName });
    expect(ids(few)).toEqual(Array.from({ length: 10 }, (_, index) => needleId(10 + index)));
    expect(few).toMatchObject({ hasNext: false, total: 10, totalExact: true, walkStopped: null });
  });
});
