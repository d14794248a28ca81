/**
 * The name search at scale, on the suite's engine (SQLite's FTS5 trigram table, PostgreSQL's pg_trgm index and
 * its index of one- and two-character substrings):
 * the same answers as "the folded name contains the folded query" whether the rows come from the index (few
 * matches) or from the walk that tests each name (many matches, or a query of one or two characters), the
 * access rule kept on both, and the admin page's counts stopping at the cap ("10,000+").
 */
import superjson from 'superjson';
import { beforeAll, describe, expect, it } from 'vitest';

import { foldForSearch } from '@/shared/plants';

import { setupServer } from '@test-support/api-fixture';
import { insertPlantsOf } from '@test-support/database';
import { trpcRequest } from '@test-support/trpc-client';
import type { ApiClient } from '@test-support/http-client';

// Rate limits off: this file is about answers, and asks many (e2e/api/costs.test.ts charges searches).
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
let alice: ApiClient;
let aliceToken: string;

const NAMES = [
  'Straße-Farn',
  'STRASSE lily',
  '100% cactus',
  'abc_d',
  'abcxd',
  'Café crème',
  'Cafe\u0301 noir',
  'back\\slash fern',
  'say "hi" ivy',
  'ﬁcus lyrata',
  'Ｆｕｌｌ width palm',
  'ΟΔΟΣ',
  'x',
  'Aloe ~~~ (rare)',
  // Holds the rarest trigrams of "crowded fern 1000" ("000", "100") but not the query: on PostgreSQL the index
  // is asked for those alone and this name must fail the test of the whole query.
  'Fern 1000',
];
/** Enough plants of one name that a search for it takes the walk, and counts stop at the cap. */
const CROWD = 10_050;
const CROWD_BASE = 1_000_000n;

const insertPlants = (owner: string, rows: { id: bigint; name: string; tag?: string }[]) => insertPlantsOf(server.database, owner, rows);

async function page(token: string, input: Record<string, unknown>) {
  const response = await trpcRequest(server.baseUrl, 'plants.page', { token, query: `input=${encodeURIComponent(JSON.stringify(superjson.serialize(input)))}` });
  expect(response.status).toBe(200);
  return superjson.deserialize<{ rows: { id: bigint }[]; total: number; totalExact: boolean; offset: number; offsetExact: boolean; hasNext: boolean }>(
    ((await response.json()) as { result: { data: never } }).result.data,
  );
}

/** `limit` other than 100 asks a query no earlier request made: not a list the server kept for its ETag (kept-answers.ts). */
const found = async (client: ApiClient, q: string, limit = 100) => {
  const response = await client.get(`/api/plants?limit=${limit}&q=${encodeURIComponent(q)}`);
  expect(response.status, q).toBe(200);
  return (response.json as { id: bigint }[]).map((plant) => plant.id);
};

beforeAll(async () => {
  aliceToken = (await server.createToken('search-alice', 'member')).token;
  alice = server.client(aliceToken);
  await server.createToken('search-bob', 'member');
  await insertPlants(
    'search-alice',
    NAMES.map((name, index) => ({ id: BigInt(index + 1), name })),
  );
  // Bob has a plant of every name too, and one that only he has.
  await insertPlants('search-bob', [...NAMES.map((name, index) => ({ id: BigInt(index + 101), name })), { id: 200n, name: 'Zebra haworthia' }]);
  await insertPlants(
    'search-alice',
    Array.from({ length: CROWD }, (_, index) => ({ id: CROWD_BASE + BigInt(index), name: `Crowded fern ${index}`, tag: 'crowded' })),
  );
  // The planner's statistics, as autovacuum would have them by now.
  if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
}, 120_000);

describe('the name search', () => {
  it('answers what "contains" says for every kind of text, through the index and through the walk', async () => {
    const queries = ['STRASSE', 'straße', 'ẞ', 's', 'ss', '%', '0% c', '_', 'c_d', 'x', 'xd', 'CAFÉ', 'é c', 'e\u0301', '\\', 'k\\s', '"', '"hi"', 'fi', 'ﬁcus', 'full', 'ＰＡＬＭ', 'οδος', 'ς', "' OR 1=1 --", 'zebra', '~~~', '~ (', 'e ~~'];
    for (const q of queries) {
      const expected = NAMES.flatMap((name, index) => (foldForSearch(name).includes(foldForSearch(q)) ? [BigInt(index + 1)] : []));
      const crowd = foldForSearch('Crowded fern').includes(foldForSearch(q));
      const ids = (await found(alice, q)).filter((id) => id < CROWD_BASE);
      expect(ids, `q=${JSON.stringify(q)}`).toEqual(expected);
      if (!crowd) expect(await found(alice, q), `q=${JSON.stringify(q)}: no crowd`).toEqual(expected);
    }
  });

  it('asks the trigram index for the rarest trigrams of a long query, by the statistics ANALYZE keeps of them', async () => {
    if (server.database.engine !== 'postgresql') return;
    // The statistics object of migration *_plant_name_trigram_statistics, filled by the ANALYZE above: without
    // it every trigram is asked (a right answer either way; the test above would not reach the narrowed plan).
    const [statistics] = await server.database.query<{ trigrams: string | null }>(
      `SELECT most_common_elems::text AS trigrams FROM pg_stats_ext_exprs WHERE statistics_name = 'Plant_nameFolded_trigrams'`,
    );
    expect(statistics?.trigrams).toContain('cro');
    expect(await found(alice, 'crowded fern 1000')).toEqual([1000, ...Array.from({ length: 10 }, (_, index) => 10_000 + index)].map((at) => CROWD_BASE + BigInt(at)));
    expect(await page(aliceToken, { size: 25, q: 'Crowded Fern 1000' })).toMatchObject({ total: 11, totalExact: true, hasNext: false });
    expect(await found(server.admin, 'fern 1000')).toEqual([15n, 115n, ...(await found(alice, 'crowded fern 1000'))].sort((a, b) => (a < b ? -1 : 1)));
  });

  it("never finds another member's plant, whether the index or the walk finds the rows", async () => {
    expect(await found(alice, 'zebra haworthia')).toEqual([]);
    expect(await found(alice, 'ze')).toEqual([]);
    expect(await page(aliceToken, { size: 10, q: 'haworthia' })).toMatchObject({ rows: [], total: 0, totalExact: true, hasNext: false });
    expect(await found(server.admin, 'zebra haworthia')).toEqual([200n]);
  });

  it('pages a search of many matches by id, and counts it up to the cap', async () => {
    const crowded = await found(alice, 'crowded fern');
    expect(crowded).toEqual(Array.from({ length: 100 }, (_, index) => CROWD_BASE + BigInt(index)));
    const first = await page(aliceToken, { size: 25, q: 'CROWDED' });
    // A search counts to 1,000; the tag and owner filters to 10,000.
    expect(first).toMatchObject({ total: 1_000, totalExact: false, offset: 0, offsetExact: true, hasNext: true });
    expect(first.rows.map((row) => row.id)).toEqual(crowded.slice(0, 25));
    const second = await page(aliceToken, { size: 25, q: 'CROWDED', cursor: { kind: 'after', id: crowded[24] } });
    expect(second).toMatchObject({ offset: 25, offsetExact: true, hasNext: true });
    expect(second.rows.map((row) => row.id)).toEqual(crowded.slice(25, 50));
    // A search of few among them: exact, from the index.
    expect(await page(aliceToken, { size: 25, q: 'crowded fern 1000' })).toMatchObject({ total: 11, totalExact: true, offset: 0, hasNext: false });
    // One character: the walk.
    expect(await page(aliceToken, { size: 25, q: 'w' })).toMatchObject({ total: 1_000, totalExact: false, hasNext: true });
    // Sorted by name, the walk follows the name index (on PostgreSQL the page's ids come from it alone).
    const byName = Array.from({ length: CROWD }, (_, index) => ({ id: CROWD_BASE + BigInt(index), name: `crowded fern ${index}` }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((plant) => plant.id);
    const sort = { key: 'name', dir: 'asc' };
    const firstByName = await page(aliceToken, { size: 25, q: 'CROWDED', sort });
    expect(firstByName.rows.map((row) => row.id)).toEqual(byName.slice(0, 25));
    const secondByName = await page(aliceToken, { size: 25, q: 'CROWDED', sort, cursor: { kind: 'after', id: byName[24] } });
    expect(secondByName.rows.map((row) => row.id)).toEqual(byName.slice(25, 50));
    expect(secondByName).toMatchObject({ offset: 25, offsetExact: true, hasNext: true });
  });

  it('takes a search of few matches from the trigram index itself', async () => {
    if (server.database.engine === 'sqlite') {
      // The FTS5 table is where the index plan looks (and, for one character, the index of names' last
      // characters): a plant taken out of it is not found by a search of few matches, of three characters or
      // more (a phrase), of two or of one (its terms), except where the character ends its name.
      await insertPlants('search-alice', [{ id: 300n, name: 'Hidden quokkaЖ' }]);
      expect(await found(alice, 'quokka')).toEqual([300n]);
      await server.database.execute('DELETE FROM "PlantNameSearch" WHERE rowid = ?', [300n]);
      try {
        // The index is no plant: taking a row out of it changes no list version, and the same request would be
        // answered as before from what the server kept. Another limit is another query, which reads the index.
        expect(await found(alice, 'quokka', 99)).toEqual([]);
        expect(await found(alice, 'qu')).toEqual([]);
        expect(await found(alice, 'q')).toEqual([]);
        expect(await found(alice, 'ж')).toEqual([300n]);
      } finally {
        // As the triggers write it: the folded name and its padding (one U+0001).
        await server.database.execute('INSERT INTO "PlantNameSearch" (rowid, "nameFolded") VALUES (?, ?)', [300n, `${foldForSearch('Hidden quokkaЖ')}\u0001`]);
      }
      return;
    }
    // PostgreSQL: the planner chooses, and walks a table this small (10,000 rows) rather than read an
    // index; with 100,000 more of Bob's (made by the database in one statement) the index is its choice. The
    // check is that the search read the GIN index: its scans, as the statistics count them (a backend
    // reports them when it goes idle, within about a second).
    const [bob] = await server.database.query<{ id: bigint }>('SELECT id FROM "User" WHERE name = ?', ['search-bob']);
    await server.database.execute(
      `INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") SELECT 5000000 + i, 'Filler ' || i, 'filler ' || i, ?, now() FROM generate_series(1, 100000) AS i`,
      [bob!.id],
    );
    await server.database.execute('ANALYZE "Plant"');
    const scans = async (index: string) =>
      Number((await server.database.query<{ n: bigint }>(`SELECT idx_scan AS n FROM pg_stat_user_indexes WHERE indexrelname = ?`, [index]))[0]!.n);
    const trigrams = () => scans('Plant_nameFolded_trgm_idx');
    // One and two characters: pg_trgm has no trigram of them; the index of every name's one- and
    // two-character substrings (migration *_plant_name_search_short_queries) finds the few that hold them.
    const shortSubstrings = () => scans('Plant_nameFolded_grams_idx');
    try {
      const before = await trigrams();
      expect(await found(alice, 'lyrata')).toEqual([10n]);
      expect(await page(aliceToken, { size: 25, q: 'lyrata' })).toMatchObject({ total: 1, totalExact: true });
      await expect.poll(trigrams, { timeout: 30_000, interval: 200 }).toBeGreaterThan(before);

      // A query pg_trgm takes no trigram from (punctuation, words too short to pad into one) can only read its
      // index whole, so PostgreSQL scans the table instead: the short substrings' index answers by its pairs.
      const beforePairs = await shortSubstrings();
      expect(await found(alice, '~~~')).toEqual([14n]);
      expect(await page(aliceToken, { size: 25, q: '~ (' })).toMatchObject({ total: 1, totalExact: true, hasNext: false });
      await expect.poll(shortSubstrings, { timeout: 30_000, interval: 200 }).toBeGreaterThan(beforePairs);

      const beforeShort = await shortSubstrings();
      expect(await found(alice, 'ly')).toEqual([2n, 10n]);
      expect(await found(alice, 'Δ')).toEqual([12n]);
      expect(await found(alice, 'zq')).toEqual([]);
      expect(await page(aliceToken, { size: 25, q: 'ly' })).toMatchObject({ total: 2, totalExact: true, hasNext: false });
      expect(await page(aliceToken, { size: 25, q: 'zq' })).toMatchObject({ rows: [], total: 0, totalExact: true });
      await expect.poll(shortSubstrings, { timeout: 30_000, interval: 200 }).toBeGreaterThan(beforeShort);
      // A pair in many names is walked as before ("w" of "Crowded"), and answers the same.
      expect(await page(aliceToken, { size: 25, q: 'w' })).toMatchObject({ total: 1_000, totalExact: false, hasNext: true });
    } finally {
      await server.database.execute('DELETE FROM "Plant" WHERE id > 5000000 AND id <= 5100000');
      await server.database.execute('ANALYZE "Plant"');
    }
  });

  it('answers names built to cost the index much as "contains" says: a character or a trigram repeated, noncharacters', async () => {
    // On SQLite these read the index within budgets (src/server/plants/search.ts): names full of one
    // character hold ~200 entries each of its term range; a query of one repeated trigram is asked for it once;
    // FTS5 holds U+FFFE and U+FFFF as U+FFFD, and each name it finds is tested.
    const carolToken = (await server.createToken('search-carol', 'member')).token;
    const carol = server.client(carolToken);
    const costly = [
      ...Array.from({ length: 60 }, (_, index) => ({ id: 400n + BigInt(index), name: `${'Ж'.repeat(199)}q` })),
      ...[500n, 501n, 502n].map((id) => ({ id, name: '0'.repeat(200) })),
      { id: 503n, name: `${'0'.repeat(150)}1` },
      { id: 510n, name: 'ab\uFFFEcd' },
      { id: 511n, name: 'ab\uFFFDcd' },
      { id: 512n, name: 'ab\uFFFFcd' },
    ];
    await insertPlants('search-carol', costly);
    const queries = ['ж', 'жж', 'жq', 'q', '0'.repeat(200), '0'.repeat(150), `${'0'.repeat(100)}1`, '000', '\uFFFE', '\uFFFD', 'b\uFFFF', 'ab\uFFFEc', 'b\uFFFDcd'];
    for (const q of queries) {
      const expected = costly.flatMap((plant) => (foldForSearch(plant.name).includes(foldForSearch(q)) ? [plant.id] : []));
      expect(await found(carol, q), `q=${JSON.stringify(q)}`).toEqual(expected);
      expect(await page(carolToken, { size: 100, q, cursor: { kind: 'last' } }), `q=${JSON.stringify(q)}: the count`).toMatchObject({
        total: expected.length,
        totalExact: true,
      });
      // Nobody else finds them.
      expect((await found(alice, q)).filter((id) => id >= 400n && id < 600n), `q=${JSON.stringify(q)}: another member`).toEqual([]);
    }
  });

  it('counts a tag and an owner past the cap exactly, from the counts the database keeps, and places the last page', async () => {
    expect(await page(aliceToken, { size: 25, tag: 'crowded' })).toMatchObject({ total: CROWD, totalExact: true, offset: 0, offsetExact: true });
    const last = await page(aliceToken, { size: 25, tag: 'crowded', cursor: { kind: 'last' } });
    expect(last.rows.map((row) => row.id)).toEqual(Array.from({ length: 25 }, (_, index) => CROWD_BASE + BigInt(CROWD - 25 + index)));
    expect(last).toMatchObject({ totalExact: true, offset: CROWD - 25, offsetExact: true, hasNext: false });
    const [alice] = await server.database.query<{ plants: bigint }>(
      `SELECT COUNT(*) AS plants FROM "Plant" WHERE "ownerId" = (SELECT id FROM "User" WHERE name = 'search-alice')`,
    );
    expect(Number(alice!.plants)).toBeGreaterThan(10_000);
    expect(await page(server.adminToken, { size: 25, owner: 'search-alice' })).toMatchObject({ total: Number(alice!.plants), totalExact: true });
    expect(await page(server.adminToken, { size: 25, owner: 'search-bob' })).toMatchObject({ total: NAMES.length + 1, totalExact: true });
  });
});
