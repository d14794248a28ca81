import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { engineLayouts } from '@/server/db/engines';
import { applyMigrations } from '@/server/db/migrate';
import { actorOf, signIn } from '@test-support/actors';
import { insertPlantRows } from '@test-support/plant-rows';
import { COUNT_CAP, NAME_MAX_LENGTH, SEARCH_COUNT_CAP } from '@/shared/limits';
import { nameFoldTable } from '@/shared/name-fold';
import { foldForSearch } from '@/shared/plants';
import { DEFAULT_SORT } from '@/shared/plant-table';

import { type PlannedFilters, ready } from './conditions';
import { COUNT_WALK_BUDGET, countMatching, PHRASE_COUNT_BUDGET } from './counts';
import { selectFrom } from './walks';
import { listPlants } from './service';
import { indexedMatchesMax, planNameSearch } from './search';
import { ftsMatches, ftsQuery, ID_ORDER_PROBE_MATCHES, LONG_QUERY_TRIGRAMS, RARE_TRIGRAMS_ASKED, SHORT_QUERY_ENTRIES_BUDGET } from './search-sqlite';

/** The unit tests' engine is SQLite: its cap. */
const INDEXED_MATCHES_MAX = indexedMatchesMax();

/**
 * The name search on SQLite (PostgreSQL's is held to the same rules over HTTP in e2e/api/search.test.ts):
 * both plans (the trigram index, and the walk that tests each name) answer exactly what "the folded name
 * contains the folded query" says, for any text (two characters through the terms of the index, one through
 * those terms and the index of last characters); the index is kept by the database with every write; the plan
 * is chosen by how many match; counts stop at the cap.
 */

async function idsFound(actor: Actor, q: string, plan: 'index' | 'filter'): Promise<bigint[]> {
  const filters: PlannedFilters = { q, search: { folded: foldForSearch(q), plan } };
  const rows = await selectFrom(actor, filters, DEFAULT_SORT, { limit: 1_000, withOwner: false });
  return rows.map((row) => BigInt(row.id));
}

/**
 * The same search a few rows at a time in id order, from just before `first` up (or from `past` down), as the
 * admin table (selectFrom) and the REST list (listPlants) page: what the filter plan's probe of the phrase's
 * first matches by id answers is held to the index's, at every position and in both directions.
 */
async function idsPaged(actor: Actor, q: string, plan: 'index' | 'filter', first: bigint, past: bigint, descending: boolean): Promise<bigint[]> {
  const filters: PlannedFilters = { q, search: { folded: foldForSearch(q), plan } };
  const sort = { key: 'id', dir: descending ? 'desc' : 'asc' } as const;
  const ids: bigint[] = [];
  let from = { segment: 0, key: null, id: descending ? past : first - 1n };
  for (;;) {
    const rows = (await selectFrom(actor, filters, sort, { from, limit: 2, withOwner: false })).filter((row) => BigInt(row.id) >= first && BigInt(row.id) < past);
    ids.push(...rows.map((row) => BigInt(row.id)));
    if (rows.length < 2) return ids;
    from = { segment: 0, key: null, id: BigInt(rows[1]!.id) };
  }
}

/** The REST list's ids for `q`, page by page (`limit` a page), as the service answers them. */
async function idsListed(actor: Actor, q: string, limit: number): Promise<bigint[]> {
  const ids: bigint[] = [];
  let after: bigint | undefined;
  do {
    const page = await listPlants(actor, { limit, q, ...(after === undefined ? {} : { after }) });
    ids.push(...page.plants.map((plant) => plant.id));
    after = page.nextAfter ?? undefined;
  } while (after !== undefined);
  return ids;
}

describe('the name search on SQLite', () => {
  it('finds exactly what "contains" says through the index and through the walk, for any text', async () => {
    const owner = await signIn('search-property');
    const other = await signIn('search-property-other');
    // Characters that are special somewhere: LIKE's wildcards and escape, FTS5's quote, case and folding
    // pairs (ß/SS/ẞ, é as one code point and as e + accent, the final sigma, a ligature), and astral ones.
    // And U+FFFD, U+FFFE and U+FFFF, which FTS5 reads as one character (the name test tells them apart); runs of
    // one character ("aaaa": its trigrams repeat, so the index is asked for each distinct one, not the phrase).
    const alphabet = ['a', 'b', 'A', '%', '_', '\\', '"', "'", ' ', 'ß', 'S', 'ẞ', 'é', 'e\u0301', 'ς', 'Σ', 'ﬁ', '😀', '*', '-', ':', '\uFFFD', '\uFFFE', '\uFFFF', 'aaaa'];
    const text = (max: number) => fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: max }).map((parts) => parts.join(''));
    let nextId = 1_000_000n;
    await fc.assert(
      fc.asyncProperty(fc.array(text(12), { minLength: 1, maxLength: 12 }), fc.array(text(4), { minLength: 1, maxLength: 6 }), async (names, queries) => {
        const first = nextId;
        const plants = names.map((name) => ({ id: nextId++, name }));
        await insertPlantRows(actorOf(owner).userId, plants);
        // Another member's plant with every name too: never found by this member, whichever way.
        await insertPlantRows(actorOf(other).userId, names.map((name) => ({ id: nextId++, name })));
        for (const q of queries) {
          const expected = plants.filter((plant) => foldForSearch(plant.name).includes(foldForSearch(q))).map((plant) => plant.id);
          const range = (ids: bigint[]) => ids.filter((id) => id >= first);
          // A query the fold leaves empty (spaces only) is every name's: the planner walks for it, never the index.
          const plans = foldForSearch(q) === '' ? (['filter'] as const) : (['filter', 'index'] as const);
          expect(range(await idsFound(actorOf(owner), q, 'filter')), `walk, q=${JSON.stringify(q)}`).toEqual(expected);
          if (plans.length > 1) expect(range(await idsFound(actorOf(owner), q, 'index')), `index, q=${JSON.stringify(q)}`).toEqual(expected);
          for (const plan of plans) {
            expect(await idsPaged(actorOf(owner), q, plan, first, nextId, false), `${plan}, paged up, q=${JSON.stringify(q)}`).toEqual(expected);
            expect(await idsPaged(actorOf(owner), q, plan, first, nextId, true), `${plan}, paged down, q=${JSON.stringify(q)}`).toEqual(expected.toReversed());
          }
        }
      }),
      { numRuns: 60 },
    );
    // 60 runs of a dozen queries, each asked six ways: ~2–3 s alone, more than the default 5 s beside the whole suite.
  }, 60_000);

  it('keeps the edge cases of the REST list: one and two characters, % and _, accents, STRASSE and Straße', async () => {
    const { caller } = await signIn('search-edges');
    const names: [bigint, string][] = [
      [2_000_001n, 'Straße-Farn'],
      [2_000_002n, 'STRASSE lily'],
      [2_000_003n, '100% cactus'],
      [2_000_004n, 'abc_d'],
      [2_000_005n, 'abcxd'],
      [2_000_006n, 'Café crème'],
      [2_000_007n, 'Cafe\u0301 noir'],
      [2_000_008n, 'x'],
    ];
    for (const [id, name] of names) await caller.plants.create({ id, name });
    const found = async (q: string) => (await caller.plants.list({ q })).map((plant) => plant.id);
    expect(await found('STRASSE')).toEqual([2_000_001n, 2_000_002n]);
    expect(await found('Straße')).toEqual([2_000_001n, 2_000_002n]);
    expect(await found('ẞ')).toEqual([2_000_001n, 2_000_002n]);
    expect(await found('%')).toEqual([2_000_003n]);
    expect(await found('0% c')).toEqual([2_000_003n]);
    expect(await found('c_d')).toEqual([2_000_004n]);
    expect(await found('_')).toEqual([2_000_004n]);
    expect(await found('x')).toEqual([2_000_005n, 2_000_008n]);
    expect(await found('xd')).toEqual([2_000_005n]);
    expect(await found('CAFÉ')).toEqual([2_000_006n, 2_000_007n]);
    expect(await found('é c')).toEqual([2_000_006n]);
    expect(await found('"')).toEqual([]);
  });

  it('leaves out U+FFFE and U+FFFF as every invisible character, and finds U+FFFD as itself', async () => {
    const { caller } = await signIn('search-nonchar');
    // Names may hold noncharacters beside a visible one (shared/plants.ts), and queries too; never drawn, they
    // do not count on either side (FTS5, which reads them as U+FFFD, never sees them).
    await caller.plants.create({ id: 2_900_001n, name: 'a\uFFFFb fern' });
    await caller.plants.create({ id: 2_900_002n, name: 'a\uFFFDb palm' });
    const found = async (q: string) => (await caller.plants.list({ q })).map((plant) => plant.id);
    expect(await found('\uFFFF')).toEqual([2_900_001n, 2_900_002n]);
    expect(await found('ab')).toEqual([2_900_001n]);
    expect(await found('a\uFFFFb')).toEqual([2_900_001n]);
    expect(await found('a\uFFFEb f')).toEqual([2_900_001n]);
    expect(await found('\uFFFD')).toEqual([2_900_002n]);
    expect(await found('a\uFFFDb')).toEqual([2_900_002n]);
    // The walk's count reads the phrase's matches too: it must test their names.
    expect(await caller.plants.page({ size: 10, q: 'a\uFFFDb', cursor: { kind: 'last' } })).toMatchObject({ total: 1, totalExact: true });
  });

  it("never shows a member another member's plant through the index", async () => {
    const alice = await signIn('search-alice');
    const bob = await signIn('search-bob');
    await bob.caller.plants.create({ id: 2_100_001n, name: 'Zebra haworthia' });
    await alice.caller.plants.create({ id: 2_100_002n, name: 'Zebra plant' });
    expect((await planNameSearch('zebra h')).plan).toBe('index');
    expect((await alice.caller.plants.list({ q: 'zebra h' })).map((plant) => plant.id)).toEqual([]);
    expect((await alice.caller.plants.list({ q: 'zebra' })).map((plant) => plant.id)).toEqual([2_100_002n]);
    expect(await alice.caller.plants.page({ size: 10, q: 'haworthia' })).toMatchObject({ rows: [], total: 0, totalExact: true, hasNext: false });
    expect(await bob.caller.plants.page({ size: 10, q: 'haworthia' })).toMatchObject({ total: 1, totalExact: true });
  });

  it('keeps the index with every write: create, rename, delete, undo, and names folded late', async () => {
    const { caller } = await signIn('search-writes');
    const found = async (q: string) => (await caller.plants.list({ q })).map((plant) => plant.id);
    await caller.plants.create({ id: 2_200_001n, name: 'Kentia palm' });
    expect(await found('kentia')).toEqual([2_200_001n]);
    await caller.plants.update({ id: 2_200_001n, name: 'Areca palm' });
    expect(await found('kentia')).toEqual([]);
    expect(await found('areca')).toEqual([2_200_001n]);
    await caller.plants.deleteMany({ selection: { kind: 'ids', ids: [2_200_001n] }, keepForUndo: true });
    expect(await found('areca')).toEqual([]);
    await caller.plants.restore({ ids: [2_200_001n] });
    expect(await found('areca')).toEqual([2_200_001n]);
    await caller.plants.delete({ id: 2_200_001n });
    expect(await found('areca')).toEqual([]);
    // A row written with no folded name (by SQL, by an older version) is folded and indexed by the database at once.
    await db.$executeRaw`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") SELECT ${2_200_002n}, 'Old Sago palm', NULL, "ownerId", CURRENT_TIMESTAMP FROM "Plant" WHERE id = 2000001`;
    const [folded] = await db.$queryRaw<{ n: bigint }[]>`SELECT COUNT(*) AS n FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH '"old sago"' AND rowid = ${2_200_002n}`;
    expect(Number(folded!.n)).toBe(1);
  });

  it('takes a search of few matches from the index (any length), and one of many by the walk', async () => {
    const ownerId = actorOf(await signIn('search-plans')).userId;
    expect((await planNameSearch('Rare orchid 7')).plan).toBe('index');
    // One or two characters with few or no matches: the terms of the index (and for one character the index of
    // last characters), not a walk of every plant.
    expect((await planNameSearch('zq')).plan).toBe('index');
    expect((await planNameSearch('ж')).plan).toBe('index');
    await insertPlantRows(
      ownerId,
      Array.from({ length: INDEXED_MATCHES_MAX + 1 }, (_, index) => ({ id: 3_000_000n + BigInt(index), name: `Crowded fern ${index}`, tag: 'crowded' })),
    );
    expect(await planNameSearch('CROWDED')).toEqual({ folded: 'crowded', plan: 'filter' });
    expect(await planNameSearch('Cr')).toEqual({ folded: 'cr', plan: 'filter' });
    expect(await planNameSearch('W')).toEqual({ folded: 'w', plan: 'filter' });
    expect(await planNameSearch('crowded fern 1234')).toMatchObject({ folded: 'crowded fern 1234', plan: 'index' });
  });

  it('decides one or two characters by reading at most a budget of index entries, whatever the names hold', async () => {
    const member = await signIn('search-repeats');
    const { userId } = actorOf(member);
    // Names full of one character: 199 entries each in the term list ("жжж" 197 times, "жжq", "жq" and the
    // padding), so a few dozen names hold more entries than deciding may read. They are few names (the index
    // plan's cap is INDEXED_MATCHES_MAX), but reading them all cost ~100 ms a statement for 2,000 of them.
    const perName = 199;
    const names = Math.ceil(SHORT_QUERY_ENTRIES_BUDGET / perName) + 1;
    expect(names).toBeLessThan(INDEXED_MATCHES_MAX);
    const ids = Array.from({ length: names }, (_, index) => 6_000_000n + BigInt(index));
    await insertPlantRows(
      userId,
      ids.map((id) => ({ id, name: `${'Ж'.repeat(perName)}q` })),
    );
    const [entries] = await db.$queryRaw<{ n: bigint }[]>`SELECT COUNT(*) AS n FROM "PlantNameSearchTerms" WHERE term >= 'ж' AND term < 'з'`;
    expect(Number(entries!.n)).toBeGreaterThanOrEqual(SHORT_QUERY_ENTRIES_BUDGET);
    // More entries than the budget: the walk of the view, whose count reads at most COUNT_WALK_BUDGET rows.
    expect(await planNameSearch('ж')).toEqual({ folded: 'ж', plan: 'filter' });
    expect(await planNameSearch('жж')).toEqual({ folded: 'жж', plan: 'filter' });
    // The same answers either way.
    expect(await idsFound(actorOf(member), 'ж', 'filter')).toEqual(ids);
    expect(await member.caller.plants.page({ size: 10, q: 'Жq', cursor: { kind: 'last' } })).toMatchObject({ total: names, totalExact: true, hasNext: false });
    // A character of few entries still comes from the index.
    expect((await planNameSearch('q')).plan).toBe('index');
  });

  it('serves U+FFFD from the index; U+FFFE and U+FFFF, which FTS5 would read as U+FFFD, never reach it', async () => {
    const { caller } = await signIn('search-nonchar-index');
    await caller.plants.create({ id: 2_900_101n, name: 'c\uFFFEd fern' });
    await caller.plants.create({ id: 2_900_102n, name: 'c\uFFFDd palm' });
    for (const q of ['\uFFFD', 'c\uFFFDd', 'c\uFFFDd p', 'c\uFFFEd f']) expect((await planNameSearch(q)).plan, JSON.stringify(q)).toBe('index');
    const found = async (q: string) => (await caller.plants.list({ q })).map((plant) => plant.id);
    expect(await found('c\uFFFEd')).toEqual([2_900_101n]);
    expect(await found('cd f')).toEqual([2_900_101n]);
    expect(await found('c\uFFFDd')).toEqual([2_900_102n]);
    expect(await caller.plants.page({ size: 10, q: 'c\uFFFDd', cursor: { kind: 'last' } })).toMatchObject({ total: 1, totalExact: true });
  });

  it('asks the index for the distinct trigrams of a query whose trigrams repeat, and for the phrase of any other', () => {
    // A phrase of n tokens costs FTS5 up to n × positions per name: 198 × 198 for "0" × 200 against names of zeros.
    expect(ftsQuery('0'.repeat(200))).toBe('"000"');
    expect(ftsQuery('abababab')).toBe('"aba" AND "bab"');
    expect(ftsQuery('orchid ivy')).toBe('"orchid ivy"');
    expect(ftsQuery('say "hi"')).toBe('"say ""hi"""');
    expect(ftsQuery('a\uFFFEb')).toBe('"a\uFFFDb"');
  });

  it(`asks the index for the ${RARE_TRIGRAMS_ASKED} rarest trigrams of a long query, and for one in no name alone`, async () => {
    const { caller } = await signIn('search-rare-trigrams');
    // Twelve characters no other test writes: ten distinct trigrams. The first two are in five names, the
    // others in two: the exact match, and a name holding them out of its order (found by them, dropped by its name test).
    const query = '木火土金水日月山川田石竹';
    const trigrams = [...query].slice(2).map((_, at) => [...query].slice(at, at + 3).join(''));
    expect(trigrams.length).toBeGreaterThan(LONG_QUERY_TRIGRAMS);
    await caller.plants.create({ id: 2_950_001n, name: query });
    await caller.plants.create({ id: 2_950_002n, name: `${query.slice(2)} 木火` });
    for (let index = 0; index < 4; index++) await caller.plants.create({ id: 2_950_010n + BigInt(index), name: query.slice(0, 4) });
    const rarest = trigrams.slice(2, 2 + RARE_TRIGRAMS_ASKED);
    expect(await planNameSearch(query)).toEqual({ folded: query, plan: 'index', match: rarest.map((trigram) => `"${trigram}"`).join(' AND ') });
    expect((await caller.plants.list({ q: query })).map((plant) => plant.id)).toEqual([2_950_001n]);
    expect(await caller.plants.page({ size: 10, q: query })).toMatchObject({ total: 1, totalExact: true });
    // A trigram in no name: no name holds the query, and the index is asked for that trigram alone.
    // Nothing else holds these characters: the ranks are the entries themselves (fewer than a sample).
    const absent = `${query}松`;
    expect(await planNameSearch(absent)).toEqual({ folded: absent, plan: 'index', match: '"石竹松"' });
    expect(await caller.plants.page({ size: 10, q: absent })).toMatchObject({ rows: [], total: 0, totalExact: true });
    // A query of few distinct trigrams keeps its phrase, with no reads of the term list.
    expect(await planNameSearch(query.slice(0, LONG_QUERY_TRIGRAMS + 2))).toEqual({ folded: query.slice(0, LONG_QUERY_TRIGRAMS + 2), plan: 'index' });
  });

  it('answers a query of a name’s length whose fold holds more distinct trigrams than one statement of SQLite can rank', async () => {
    const { caller } = await signIn('search-longest-fold');
    // The 200 code points whose folds are longest, in that order: a name within the limit, folding to 732
    // characters and more distinct trigrams than SQLite's compound SELECT takes (500 terms).
    const name = [...nameFoldTable()]
      .sort(([, a], [, b]) => [...b].length - [...a].length)
      .slice(0, NAME_MAX_LENGTH)
      .map(([codePoint]) => String.fromCodePoint(codePoint))
      .join('');
    const folded = foldForSearch(name);
    expect(new Set([...folded].slice(2).map((_, at) => [...folded].slice(at, at + 3).join(''))).size).toBeGreaterThan(500);
    await caller.plants.create({ id: 2_960_001n, name });
    expect((await caller.plants.list({ q: name })).map((plant) => plant.id)).toEqual([2_960_001n]);
    expect(await caller.plants.page({ size: 10, q: name })).toMatchObject({ total: 1, totalExact: true });
  });

  it('decides a long query by its phrase, and reads the phrase, when its rarest trigrams find more than the index plan takes', async () => {
    const crowd = actorOf(await signIn('search-rare-trigrams-crowd'));
    // Eleven characters no other test writes (nine distinct trigrams), in more names than the index plan takes.
    const query = '甲乙丙丁戊己庚辛壬癸子';
    await insertPlantRows(crowd.userId, Array.from({ length: INDEXED_MATCHES_MAX + 1 }, (_, index) => ({ id: 7_500_000n + BigInt(index), name: `${query} ${index}` })));
    // No `match`: both plans read the phrase's matches as before (the filter plan's count reads the first
    // PHRASE_COUNT_BUDGET of them; of the rarest trigrams' candidates fewer would match, and it would say less).
    expect(await planNameSearch(query)).toEqual({ folded: query, plan: 'filter' });
  }, 60_000);

  it('serves a short query whose trigrams repeat from its phrase when its distinct trigrams are in more names than the index plan takes', async () => {
    const crowd = actorOf(await signIn('search-repeated-trigrams-crowd'));
    // "子丑子丑子" repeats "子丑子": asked as its distinct trigrams, it finds every name holding both apart ("5000000"
    // at 10 M: "500" AND "000"), more than the index plan takes; its phrase finds the one name that holds it.
    const query = '子丑子丑子';
    await insertPlantRows(crowd.userId, [
      ...Array.from({ length: INDEXED_MATCHES_MAX + 1 }, (_, index) => ({ id: 7_800_000n + BigInt(index), name: `子丑子 丑子丑 ${index}` })),
      { id: 7_810_000n, name: `Fern ${query}` },
    ]);
    expect(await planNameSearch(query)).toEqual({ folded: query, plan: 'index', match: `"${query}"` });
    const { plants } = await listPlants(crowd, { limit: 10, q: query });
    expect(plants.map((plant) => plant.id)).toEqual([7_810_000n]);
  }, 60_000);

  it(`counts a search by reading at most ${PHRASE_COUNT_BUDGET.toLocaleString('en')} of its matches, then by the view's own rows`, async () => {
    const many = actorOf(await signIn('search-phrase-budget-many'));
    const few = await signIn('search-phrase-budget-few');
    const crowded = await signIn('search-phrase-budget-crowded');
    // More matches in the store than a count reads, nearly all another member's, before the others' by id.
    await insertPlantRows(many.userId, Array.from({ length: PHRASE_COUNT_BUDGET + 10 }, (_, index) => ({ id: 7_000_000n + BigInt(index), name: `Budget fern ${index}` })));
    const mine = [7_100_000n, 7_100_001n];
    await insertPlantRows(actorOf(few).userId, mine.map((id) => ({ id, name: `Budget fern of mine ${id}` })));
    await insertPlantRows(actorOf(crowded).userId, mine.map((id) => ({ id: id + 10n, name: `Budget fern of mine ${id}` })));
    // A view of more rows than a count walks (COUNT_WALK_BUDGET), none of them matching, after the two that do.
    await insertPlantRows(
      actorOf(crowded).userId,
      Array.from({ length: COUNT_WALK_BUDGET }, (_, index) => ({ id: 7_200_000n + BigInt(index), name: `Filler ${index}` })),
    );
    expect((await planNameSearch('budget fern')).plan).toBe('filter');
    // The view's own rows are few: counted exactly by them.
    expect(await countMatching(actorOf(few), await ready({ q: 'budget fern' }))).toEqual({ count: 2, exact: true });
    // Neither way reads them all: the count found, as "at least" (it read all the matches before: fewer than 50,000).
    expect(await countMatching(actorOf(crowded), await ready({ q: 'budget fern' }))).toEqual({ count: 2, exact: false });
    // A query of few matches is counted exactly from the index.
    expect(await countMatching(actorOf(crowded), await ready({ q: 'budget fern of mine' }))).toEqual({ count: 2, exact: true });
  }, 60_000);

  it('finds the names a character ends through the index of last characters, never by reading every plant', async () => {
    const plan = (await db.$queryRaw<{ detail: string }[]>`EXPLAIN QUERY PLAN ${ftsMatches('ж', INDEXED_MATCHES_MAX + 1)}`).map((row) => row.detail);
    // The expression must be the migration's own (*_plant_name_search_one_character), or SQLite scans "Plant".
    expect(plan).toContain('SEARCH l USING COVERING INDEX Plant_nameFolded_last_character_idx (<expr>=?)');
    expect(plan.filter((detail) => detail.startsWith('SCAN l'))).toEqual([]);
  });

  it("pages a search of many matches by id from the phrase's first matches, and walks when they hold too few of the view's", async () => {
    const crowd = actorOf(await signIn('search-probe-crowd'));
    const few = actorOf(await signIn('search-probe-few'));
    // Many matches (the filter plan), nearly all another member's: the few's are spread among them by id and
    // past the probe's reach, so their pages come from the walk; the crowd's come from the probe.
    const crowded = Array.from({ length: INDEXED_MATCHES_MAX + ID_ORDER_PROBE_MATCHES }, (_, index) => ({ id: 5_000_000n + BigInt(index) * 2n, name: `Probe fern ${index}` }));
    await insertPlantRows(crowd.userId, crowded);
    const mine = [5_000_001n, 5_000_003n, 5_000_000n + BigInt(INDEXED_MATCHES_MAX) * 2n + 1n, 5_000_000n + BigInt(INDEXED_MATCHES_MAX + ID_ORDER_PROBE_MATCHES) * 2n + 1n];
    await insertPlantRows(few.userId, mine.map((id) => ({ id, name: `Probe fern of mine ${id}` })));
    await insertPlantRows(few.userId, [{ id: 5_000_005n, name: 'Probe palm' }]);
    expect((await planNameSearch('probe fern')).plan).toBe('filter');
    expect(await idsListed(few, 'probe fern', 2)).toEqual(mine);
    expect(await idsListed(crowd, 'probe fern', 7)).toEqual(crowded.map((plant) => plant.id));
    expect(await idsPaged(few, 'probe fern', 'filter', 0n, 2n ** 62n, true)).toEqual(mine.toReversed());
    expect(await idsPaged(crowd, 'probe fern', 'filter', 0n, 2n ** 62n, false)).toEqual(crowded.map((plant) => plant.id));
  }, 60_000);

  it(`counts a search up to ${SEARCH_COUNT_CAP.toLocaleString('en')} and says "at least" past it; the views without one exactly, from kept counts`, async () => {
    const member = await signIn('search-counts');
    const actor = actorOf(member);
    await insertPlantRows(
      actor.userId,
      Array.from({ length: COUNT_CAP + 30 }, (_, index) => ({ id: 4_000_000n + BigInt(index), name: `Counted ivy ${index}`, tag: 'counted' })),
    );
    const count = async (filters: PlannedFilters) => countMatching(actor, await ready(filters));
    expect(await count({})).toEqual({ count: COUNT_CAP + 30, exact: true });
    expect(await count({ tag: 'counted' })).toEqual({ count: COUNT_CAP + 30, exact: true });
    expect(await count({ q: 'counted ivy' })).toEqual({ count: SEARCH_COUNT_CAP, exact: false });
    expect(await count({ q: 'v' })).toEqual({ count: SEARCH_COUNT_CAP, exact: false });
    // A search of few matches (the index plan) stops at the same cap.
    expect(await count({ q: 'counted ivy 1' })).toEqual({ count: SEARCH_COUNT_CAP, exact: false });
    // 1000, and 10000 to 10009.
    expect(await count({ q: 'counted ivy 1000' })).toEqual({ count: 11, exact: true });
    expect(await count({ q: 'ivy 10004' })).toEqual({ count: 1, exact: true });

    const { caller } = member;
    const first = await caller.plants.page({ size: 25, q: 'counted' });
    expect(first).toMatchObject({ total: SEARCH_COUNT_CAP, totalExact: false, offset: 0, offsetExact: true, hasNext: true });
    const second = await caller.plants.page({ size: 25, q: 'counted', cursor: { kind: 'after', id: first.rows[24]!.id } });
    expect(second).toMatchObject({ offset: 25, offsetExact: true, hasNext: true });
    expect(second.rows[0]!.id).toBe(4_000_025n);
    // The last page, with the total kept: what is left over after whole pages, placed exactly.
    const last = await caller.plants.page({ size: 25, tag: 'counted', cursor: { kind: 'last' } });
    expect(last.rows.map((row) => row.id)).toEqual(Array.from({ length: 5 }, (_, index) => 4_000_000n + BigInt(COUNT_CAP + 30 - 5 + index)));
    expect(last).toMatchObject({ total: COUNT_CAP + 30, totalExact: true, offset: COUNT_CAP + 25, offsetExact: true, hasNext: false });
    // Near the end but within the cap of the start, a page is placed exactly.
    const near = await caller.plants.page({ size: 25, tag: 'counted', cursor: { kind: 'after', id: 4_000_000n + BigInt(COUNT_CAP - 26) } });
    expect(near).toMatchObject({ offset: COUNT_CAP - 25, offsetExact: true, hasNext: true });
    // Back from the last page: past the cap from the start, placed from the end, and with a page after it.
    const back = await caller.plants.page({ size: 25, tag: 'counted', cursor: { kind: 'before', id: last.rows[0]!.id } });
    expect(back).toMatchObject({ offset: COUNT_CAP + 30 - 30, offsetExact: true, hasNext: true });
  });
});

describe('the migration that adds the index', () => {
  it('indexes the plants that are there already, and the names not folded yet once the database folds them', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-search-migration-'));
    try {
      const all = fs
        .readdirSync(engineLayouts.sqlite.migrationsDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
      const index = all.findIndex((name) => name.endsWith('_plant_name_search'));
      const before = path.join(directory, 'before');
      fs.mkdirSync(before);
      for (const name of all.slice(0, index)) fs.cpSync(path.join(engineLayouts.sqlite.migrationsDir, name), path.join(before, name), { recursive: true });
      const url = `file:${path.join(directory, 'app.db')}`;
      await applyMigrations({ databaseUrl: url, migrationsDir: before, log: () => {} });
      const file = new Database(url.slice('file:'.length));
      file.exec(`INSERT INTO "User" (id, name, role, "createdAt") VALUES (1, 'old', 'member', 0)`);
      const insert = file.prepare(`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") VALUES (?, ?, ?, 1, 0)`);
      insert.run(1, 'Old Monstera', 'old monstera');
      insert.run(2, 'Not folded yet', null);
      file.close();

      await applyMigrations({ databaseUrl: url, log: () => {} });
      const migrated = new Database(url.slice('file:'.length));
      const ids = migrated.prepare(`SELECT rowid AS id FROM "PlantNameSearch" WHERE "PlantNameSearch" MATCH ? ORDER BY rowid`).pluck();
      expect(ids.all('"monstera"')).toEqual([1]);
      // Folded by the name fold's migration (*_plant_name_fold_in_the_database), which indexes it.
      expect(ids.all('"not folded"')).toEqual([2]);
      // Padded, so the last two characters begin a term too (migration *_plant_name_search_two_characters).
      const startingWith = migrated.prepare(`SELECT DISTINCT doc FROM "PlantNameSearchTerms" WHERE term >= ? AND term < ? ORDER BY doc`).pluck();
      expect(startingWith.all('ra', 'rb')).toEqual([1]);
      expect(startingWith.all('et', 'eu')).toEqual([2]);
      // From here the triggers keep it, whatever is written.
      migrated.prepare(`UPDATE "Plant" SET "nameFolded" = 'something else' WHERE id = 2`).run();
      expect(ids.all('"not folded"')).toEqual([2]);
      expect(ids.all('"something"')).toEqual([]);
      migrated.close();
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
