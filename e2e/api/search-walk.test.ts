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
import type { PlantPage } from '@/shared/plant-table';

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
const needleIds = (from: number, count: number) => Array.from({ length: count }, (_, index) => needleId(from + index));

const insertPlants = (owner: string, rows: { id: bigint; name: string; tag?: string }[]) => insertPlantsOf(server.database, owner, rows);

// The suite's client, which retries a GET once when the server closes a kept-alive connection as it is reused
// (the seeding above takes longer than the server's 5 s keep-alive).
const askPage = (input: Record<string, unknown>, as = token) => server.rawClient(as).get(`/api/trpc/plants.page?input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}`);

async function page(input: Record<string, unknown>, as = token): Promise<PlantPage> {
  const response = await askPage(input, as);
  expect(response.status, response.text).toBe(200);
  return superjson.deserialize<PlantPage>((JSON.parse(response.text) as { result: { data: never } }).result.data);
}

/** The REST list's page: its plants' ids and the `after` of its `Link` to the next page (undefined on the last). */
async function list(query: string): Promise<{ ids: bigint[]; after: string | undefined }> {
  const response = await server.rawClient(token).get(`/api/plants?${query}`);
  expect(response.status, response.text).toBe(200);
  const after = /[?&]after=(-?\d+)/.exec(response.headers.get('link') ?? '')?.[1];
  return { ids: (response.json as { id: bigint }[]).map((plant) => plant.id), after };
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

  it("leaves searches of few matches as they were, and SQLite's probe of a phrase's first matches by id keeps its job", async () => {
    const byId = await page({ size: 25, q: 'needle' });
    if (server.database.engine === 'sqlite') {
      // The phrase's first matches by id hold the page: no walk.
      expect(ids(byId)).toEqual(needleIds(0, 25));
      expect(byId.walkStopped).toBeNull();
    } else {
      // PostgreSQL walks the view by id, and stops at the budget as every order does (below).
      expect(byId).toMatchObject({ rows: [], walkStopped: { direction: 'forwards', id: BigInt(budget) } });
    }
    const few = await page({ size: 25, q: 'needle 00001', sort: byName });
    expect(ids(few)).toEqual(Array.from({ length: 10 }, (_, index) => needleId(10 + index)));
    expect(few).toMatchObject({ hasNext: false, total: 10, totalExact: true, walkStopped: null });
  });
});

/**
 * Id order, the admin page's default (the REST list's only one, whose walk is not capped: its pages stay full).
 * "zz" is in 25,000 names, more than either
 * engine's index plan takes, and of two characters, so SQLite's probe of a phrase's first matches (three
 * characters or more) does not serve it: it walks the view by id on both engines, the fillers first.
 */
describe('a name search in id order, whose matches all come after more plants than one request may walk', () => {
  it('walks at most the budget per request, says where it stopped, and the next request finds the matches', async () => {
    const first = await page({ size: 25, q: 'zz' });
    expect(first.rows).toEqual([]);
    // In id order the place is the id: no key to send back; how far it got is that id.
    expect(first.walkStopped).toEqual({ direction: 'forwards', id: BigInt(budget), key: null, reached: String(budget) });
    expect(first).toMatchObject({ hasNext: true, offset: 0, offsetExact: true, cursor: undefined });
    expect(first.total === 0 && first.totalExact).toBe(false);
    const second = await page({ size: 25, q: 'zz', cursor: { kind: 'after', id: first.walkStopped!.id }, counts: false });
    expect(ids(second)).toEqual(needleIds(0, 25));
    expect(second).toMatchObject({ hasNext: true, walkStopped: null });
    // Dense from there: the next page stops after its rows.
    expect(ids(await page({ size: 25, q: 'zz', cursor: { kind: 'after', id: needleId(24) } }))).toEqual(needleIds(25, 25));
  });

  it('walks backwards the same way, and the last page, whose matches come first that way, as before', async () => {
    const previous = await page({ size: 25, q: 'zz', cursor: { kind: 'before', id: needleId(0) } });
    expect(previous.rows).toEqual([]);
    expect(previous.walkStopped).toEqual({ direction: 'backwards', id: BigInt(FILLERS - budget + 1), key: null, reached: String(FILLERS - budget + 1) });
    expect(previous).toMatchObject({ offset: 0, hasNext: true });
    const last = await page({ size: 25, q: 'zz', cursor: { kind: 'last' } });
    expect(ids(last)).toEqual(needleIds(NEEDLES - 25, 25));
    expect(last).toMatchObject({ hasNext: false, walkStopped: null });
  });

  it("answers what an attacker sends in the cursor with a 400 or a correct page, never a crash", async () => {
    // A key with an id sort (of any type): the id is the place, a key is refused unread.
    for (const key of ['aaa', null, new Date(0)]) {
      const refused = await askPage({ size: 25, q: 'zz', cursor: { kind: 'after', id: 5n, key } });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.text).toContain("the cursor's key does not fit the sort");
    }
    expect((await askPage({ size: 25, q: 'zz', sort: { key: 'id', dir: 'desc' }, cursor: { kind: 'before', id: 5n, key: 'x' } })).status).toBe(400);
    // Past int64 either way: 400, on both doors.
    expect((await askPage({ size: 25, q: 'zz', cursor: { kind: 'after', id: 2n ** 63n } })).status).toBe(400);
    expect((await server.rawClient(token).get('/api/plants?q=zz&after=9223372036854775808')).status).toBe(400);
    // After the largest id: nothing lies past it, so the page is the last one (the nearest that has rows).
    const pastEverything = await page({ size: 25, q: 'zz', cursor: { kind: 'after', id: 2n ** 63n - 1n } });
    expect(pastEverything).toMatchObject({ cursor: { kind: 'last' }, walkStopped: null, hasNext: false });
    expect(ids(pastEverything)).toEqual(needleIds(NEEDLES - 25, 25));
    expect(await list('q=zz&after=9223372036854775807')).toEqual({ ids: [], after: undefined });
    // Before the smallest: the first page, which walks from the start and stops as the first request does.
    const beforeEverything = await page({ size: 25, q: 'zz', cursor: { kind: 'before', id: -(2n ** 63n) } });
    expect(beforeEverything).toMatchObject({ rows: [], cursor: undefined, walkStopped: { direction: 'forwards', id: BigInt(budget) } });
    // The REST list walks no budget (its pages are full: docs/performance.md, "What is not bounded").
    expect(await list('q=zz&limit=20&after=-9223372036854775808')).toEqual({ ids: needleIds(0, 20), after: String(needleId(19)) });
  });
});

describe("another member's plants among the walked ones", () => {
  it("a member's walk that stops and goes on by the cursor never shows or counts another member's plants", async () => {
    // walk-bob's plants among walk-alice's in both orders: by name among her last fillers (each just after
    // hers of the same number), by id right after her fillers and before her matches. Each matches "needle" and "zz".
    const bobs = Array.from({ length: 100 }, (_, index) => ({ id: BigInt(FILLERS + 1 + index), name: `${fillerName(budget + 100 + index)} zz needle bob` }));
    await insertPlants('walk-bob', bobs);
    if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
    const bobIds = bobs.map((plant) => plant.id);
    for (const sort of [byName, { key: 'id', dir: 'asc' } as const]) {
      const q = sort.key === 'name' ? 'needle' : 'zz';
      const first = await page({ size: 25, q, sort });
      expect(first, sort.key).toMatchObject({ rows: [], walkStopped: { direction: 'forwards', id: BigInt(budget) } });
      const { id, key } = first.walkStopped!;
      const cursor = sort.key === 'id' ? { kind: 'after', id } : { kind: 'after', id, key };
      // Counted too (the offset counts the matches before the page's first row): none of bob's.
      const onward = await page({ size: 25, q, sort, cursor });
      expect(ids(onward), sort.key).toEqual(needleIds(0, 25));
      expect(onward.offset, sort.key).toBe(0);
      // An admin's walk from the same place meets bob's first: they do lie in the way.
      const admins = await page({ size: 25, q, sort, cursor }, adminToken);
      expect(ids(admins), sort.key).toEqual(bobIds.slice(0, 25));
    }
    // The REST list by id, whose page is full (no budget): her matches, none of bob's that lie before them.
    expect(await list('q=zz&limit=20')).toEqual({ ids: needleIds(0, 20), after: String(needleId(19)) });
  });
});

/**
 * Which path serves a REST search page is chosen by store-wide data: SQLite's id-order probe of a phrase's first
 * ID_ORDER_PROBE_MATCHES matches by id (anyone's), and the index plan or the filter plan (store-wide match counts,
 * PostgreSQL's statistics). The list's strong ETag changes only with what the caller could see (CONTRACT 1.2.0),
 * so another member's writes that flip the path must not change the page either: its rows, its Link, its ETag,
 * and a poll with that ETag is still answered 304. A walk capped at the budget would break this (the page would
 * come back short under the same ETag: docs/performance.md, "What is not bounded").
 */
describe("another member's writes that flip the path serving a member's REST search page", () => {
  /** The REST page as a client keeps it: rows, Link and ETag. */
  async function listed(query: string): Promise<{ ids: bigint[]; link: string | null; etag: string | null }> {
    const response = await server.rawClient(token).get(`/api/plants?${query}`);
    expect(response.status, response.text).toBe(200);
    return { ids: (response.json as { id: bigint }[]).map((plant) => plant.id), link: response.headers.get('link'), etag: response.headers.get('etag') };
  }
  async function expectUnchanged(query: string, before: Awaited<ReturnType<typeof listed>>) {
    expect(await listed(query)).toEqual(before);
    const polled = await server.rawClient(token).get(`/api/plants?${query}`, { headers: { 'If-None-Match': before.etag! } });
    expect(polled.status, polled.text).toBe(304);
  }

  it("SQLite's probe: the phrase's first matches by id become another member's, and the page is walked instead", async () => {
    const before = await listed('q=needle&limit=20');
    expect(before.ids).toEqual(needleIds(0, 20));
    // walk-bob's matches before every one of walk-alice's by id: the probe's first 1,000 matches hold none of hers.
    await insertPlants('walk-bob', Array.from({ length: 1_000 }, (_, index) => ({ id: 600_000n + BigInt(index), name: `needle bob ${index}` })));
    await expectUnchanged('q=needle&limit=20', before);
  });

  it('the plan: matches few in the store (the index plan) become many (the filter plan, a walk of her plants by id)', async () => {
    // Hers lie after every filler and needle: a walk by id reads more than the budget of her plants first.
    await insertPlants('walk-alice', Array.from({ length: 30 }, (_, index) => ({ id: 3_000_000n + BigInt(index), name: `qx ${index}` })));
    if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
    const before = await listed('q=qx&limit=20');
    expect(before.ids).toEqual(Array.from({ length: 20 }, (_, index) => 3_000_000n + BigInt(index)));
    // More matches than either engine's index plan takes (PostgreSQL's by its statistics, once analysed).
    await insertPlants('walk-bob', Array.from({ length: 12_000 }, (_, index) => ({ id: 4_000_000n + BigInt(index), name: `qx bob ${index}` })));
    if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
    await expectUnchanged('q=qx&limit=20', before);
  });
});
