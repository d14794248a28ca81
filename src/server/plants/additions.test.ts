import { describe, expect, it } from 'vitest';

import { listed } from '@/shared/messages';
import { PLANT_FIELD_NAMES } from '@/shared/plants';
import { failureOf, signIn } from '@test-support/actors';

/** Version 1.1.0's additions on the tRPC door: PATCH, the list filters, and the admin page's procedures. */

const ids = (plants: { id: bigint }[]) => plants.map((plant) => plant.id);

describe('visible characters', () => {
  it('refuses names and tags of only invisible characters, and says which rule', async () => {
    const { caller } = await signIn('vis-owner');
    for (const name of ['\u200b', '\u3164', '\u2800', '\u2060\u180e', ' \u200b ', '\ufeff', '\u202e', '\u0301\u0301', '\uffff', '\ufdd0']) {
      expect(await failureOf(caller.plants.create({ id: 1_001n, name }), { id: 1_001n, name })).toMatchObject({
        kind: 'invalidValue',
        field: 'name',
        message: expect.stringMatching(/^name must (have at least one visible character|not be only white space)/),
      });
    }
    expect(await failureOf(caller.plants.create({ id: 1_001n, name: 'ok', tag: '\u200b' }))).toMatchObject({ kind: 'invalidValue', field: 'tag' });
    // Visible text with invisible characters around it is fine: the rule asks for one visible character.
    expect(await caller.plants.create({ id: 1_001n, name: 'Fern\u202e', tag: '\u200btropical' })).toEqual({ id: 1_001n, name: 'Fern\u202e', tag: '\u200btropical' });
  });

  it('refuses a very long string by its length before counting its characters', async () => {
    const { caller } = await signIn('vis-long');
    const name = 'x'.repeat(60_000);
    expect(await failureOf(caller.plants.create({ id: 1_002n, name }), { id: 1_002n, name })).toMatchObject({ message: 'name must be at most 200 characters' });
  });
});

describe('plants.update (PATCH)', () => {
  it('renames, re-tags, removes the tag, and leaves out what it is not given', async () => {
    const { caller } = await signIn('patch-owner');
    await caller.plants.create({ id: 2_001n, name: 'Fern', tag: 'shade' });
    expect(await caller.plants.update({ id: 2_001n, name: 'Boston fern' })).toEqual({ id: 2_001n, name: 'Boston fern', tag: 'shade' });
    expect(await caller.plants.update({ id: 2_001n, tag: 'indoor' })).toEqual({ id: 2_001n, name: 'Boston fern', tag: 'indoor' });
    expect(await caller.plants.update({ id: 2_001n, tag: null })).toEqual({ id: 2_001n, name: 'Boston fern' });
    expect(await caller.plants.update({ id: 2_001n, name: 'Fern', tag: 'x' })).toEqual({ id: 2_001n, name: 'Fern', tag: 'x' });
    // The search sees the new name.
    expect(ids(await caller.plants.list({ q: 'FERN' }))).toEqual([2_001n]);
  });

  it('refuses an empty patch, an unknown field, and a bad value, naming each', async () => {
    const { caller } = await signIn('patch-validator');
    await caller.plants.create({ id: 2_101n, name: 'Fern' });
    expect(await failureOf(caller.plants.update({ id: 2_101n }))).toMatchObject({ code: 'BAD_REQUEST', kind: 'emptyPatch' });
    const unknown = { id: 2_101n, name: 'x', ownerId: 3 };
    expect(await failureOf(caller.plants.update(unknown as never), unknown)).toMatchObject({ kind: 'unknownField', message: `unknown field "ownerId": a patch changes only ${listed(PLANT_FIELD_NAMES)}` });
    expect(await failureOf(caller.plants.update({ id: 2_101n, name: '' }))).toMatchObject({ kind: 'invalidValue', field: 'name' });
    expect(await failureOf(caller.plants.update({ id: 2_101n, tag: 't'.repeat(101) }))).toMatchObject({ kind: 'invalidValue', field: 'tag' });
  });

  it("answers another member's plant exactly as a missing one, and lets an admin change any", async () => {
    const alice = await signIn('patch-alice');
    const bob = await signIn('patch-bob');
    const admin = await signIn('patch-admin', 'admin');
    await alice.caller.plants.create({ id: 2_201n, name: "Alice's" });
    expect(await failureOf(bob.caller.plants.update({ id: 2_201n, name: 'mine now' }))).toMatchObject({ code: 'NOT_FOUND', kind: 'plantNotFound', message: 'no plant with id 2201' });
    expect(await failureOf(bob.caller.plants.update({ id: 2_299n, name: 'nothing' }))).toMatchObject({ code: 'NOT_FOUND', kind: 'plantNotFound', message: 'no plant with id 2299' });
    expect(await admin.caller.plants.update({ id: 2_201n, tag: 'checked' })).toEqual({ id: 2_201n, name: "Alice's", tag: 'checked' });
    expect(await alice.caller.plants.list({ after: 2_200n, limit: 1 })).toEqual([{ id: 2_201n, name: "Alice's", tag: 'checked' }]);
  });
});

describe('list filters', () => {
  it('filters by exact tag, by name text in any case and script, and combines with after/limit and the Link', async () => {
    const { caller, context } = await signIn('filter-owner');
    const plants = [
      [3_001n, 'Straße-Farn', 'b'],
      [3_002n, 'STRASSE lily', 'a'],
      [3_003n, '100% cactus', 'a'],
      [3_004n, 'abc_d', 'A'],
      [3_005n, 'abcxd', 'a'],
      [3_006n, 'ΟΔΟΣ', undefined],
      [3_007n, 'Ｆｕｌｌ width', undefined],
    ] as const;
    for (const [id, name, tag] of plants) await caller.plants.create({ id, name, ...(tag ? { tag } : {}) });

    expect(ids(await caller.plants.list({ tag: 'a' }))).toEqual([3_002n, 3_003n, 3_005n]);
    expect(ids(await caller.plants.list({ q: 'strasse' }))).toEqual([3_001n, 3_002n]);
    expect(ids(await caller.plants.list({ q: 'STRAẞE' }))).toEqual([3_001n, 3_002n]);
    // `%` and `_` are text, not wildcards.
    expect(ids(await caller.plants.list({ q: '%' }))).toEqual([3_003n]);
    expect(ids(await caller.plants.list({ q: 'c_d' }))).toEqual([3_004n]);
    expect(ids(await caller.plants.list({ q: 'οδος' }))).toEqual([3_006n]);
    expect(ids(await caller.plants.list({ q: 'full' }))).toEqual([3_007n]);
    expect(ids(await caller.plants.list({ q: 'a', tag: 'a' }))).toEqual([3_002n, 3_003n, 3_005n]);

    expect(ids(await caller.plants.list({ tag: 'a', limit: 2 }))).toEqual([3_002n, 3_003n]);
    expect(context.responseHints.nextPageQuery).toEqual({ limit: '2', tag: 'a', after: '3003' });
    context.responseHints.nextPageQuery = undefined;
    expect(ids(await caller.plants.list({ tag: 'a', limit: 2, after: 3_003n }))).toEqual([3_005n]);
    expect(context.responseHints.nextPageQuery).toBeUndefined();
  });

  it('lets admins filter by owner, and refuses the owner filter to members', async () => {
    const alice = await signIn('owner-alice');
    const admin = await signIn('owner-admin', 'admin');
    await alice.caller.plants.create({ id: 3_101n, name: 'a1' });
    await admin.caller.plants.create({ id: 3_102n, name: 'a2' });
    expect(ids(await admin.caller.plants.list({ owner: 'owner-alice', after: 3_100n }))).toEqual([3_101n]);
    expect(await admin.caller.plants.list({ owner: 'nobody-by-this-name' })).toEqual([]);
    expect(await failureOf(alice.caller.plants.list({ owner: 'owner-alice' }))).toMatchObject({ code: 'BAD_REQUEST', kind: 'ownerFilterForAdmins', field: 'owner' });
  });

  it('refuses filters that break their rules', async () => {
    const { caller } = await signIn('filter-validator');
    for (const input of [{ q: '' }, { q: 'x'.repeat(201) }, { tag: 'a\u0000' }, { q: 'a\ud800' }]) {
      expect(await failureOf(caller.plants.list(input), input)).toMatchObject({ code: 'BAD_REQUEST', kind: 'invalidValue' });
    }
  });
});

describe('plants.page (the admin table)', () => {
  it('pages by keyset both ways with a total and a position, and jumps to the last page', async () => {
    const { caller } = await signIn('page-owner');
    for (let n = 1n; n <= 23n; n++) await caller.plants.create({ id: 4_000n + n * 10n, name: `p${n}`, ...(n % 2n === 0n ? { tag: 'even' } : {}) });
    const all = Array.from({ length: 23 }, (_, index) => 4_010n + BigInt(index) * 10n);

    const first = await caller.plants.page({ size: 10 });
    expect(ids(first.rows)).toEqual(all.slice(0, 10));
    expect(first).toMatchObject({ total: 23, offset: 0 });
    // A member's rows do not carry owner or time.
    expect(first.rows[0]).toEqual({ id: 4_010n, name: 'p1' });

    const second = await caller.plants.page({ size: 10, cursor: { kind: 'after', id: all[9]! } });
    expect(ids(second.rows)).toEqual(all.slice(10, 20));
    expect(second.offset).toBe(10);

    const last = await caller.plants.page({ size: 10, cursor: { kind: 'last' } });
    expect(ids(last.rows)).toEqual(all.slice(20));
    expect(last).toMatchObject({ total: 23, offset: 20 });

    const back = await caller.plants.page({ size: 10, cursor: { kind: 'before', id: all[20]! } });
    expect(ids(back.rows)).toEqual(all.slice(10, 20));
    expect(back.offset).toBe(10);

    const even = await caller.plants.page({ size: 10, tag: 'even', cursor: { kind: 'last' } });
    expect(even).toMatchObject({ total: 11, offset: 10 });
    expect(ids(even.rows)).toEqual([all[21]]);
  });

  it('falls back to the nearest page when the one asked for has emptied', async () => {
    const { caller } = await signIn('page-empty');
    for (const id of [5_001n, 5_002n, 5_003n]) await caller.plants.create({ id, name: `p${id}` });
    const emptied = await caller.plants.page({ size: 10, cursor: { kind: 'after', id: 5_003n } });
    expect(emptied).toMatchObject({ total: 3, offset: 0, cursor: { kind: 'last' } });
    expect(ids(emptied.rows)).toEqual([5_001n, 5_002n, 5_003n]);
    const before = await caller.plants.page({ size: 10, cursor: { kind: 'before', id: 5_001n } });
    expect(before.cursor).toBeUndefined();
    expect(ids(before.rows)).toEqual([5_001n, 5_002n, 5_003n]);
  });

  it('shows admins the owner and creation time', async () => {
    const alice = await signIn('page-alice');
    const admin = await signIn('page-admin', 'admin');
    await alice.caller.plants.create({ id: 6_001n, name: 'owned' });
    const page = await admin.caller.plants.page({ size: 10, owner: 'page-alice' });
    expect(page.rows).toEqual([{ id: 6_001n, name: 'owned', owner: 'page-alice', createdAt: expect.any(Date) }]);
    expect(await failureOf(alice.caller.plants.page({ size: 10, owner: 'page-alice' }))).toMatchObject({ kind: 'ownerFilterForAdmins' });
    expect(await failureOf(alice.caller.plants.page({ size: 7 as 10 }), { size: 7 })).toMatchObject({ kind: 'invalidValue' });
  });
});

describe('plants.deleteMany, retagMany, restore and suggestId', () => {
  it("deletes what it may, and says per id what it did not (gone already, or another's)", async () => {
    const alice = await signIn('bulk-alice');
    const bob = await signIn('bulk-bob');
    for (const id of [7_001n, 7_002n]) await alice.caller.plants.create({ id, name: `p${id}` });
    await bob.caller.plants.create({ id: 7_003n, name: "Bob's" });
    const results = await alice.caller.plants.deleteMany({ selection: { kind: 'ids', ids: [7_001n, 7_003n, 7_002n, 7_009n] } });
    // Bob's plant and a missing one look alike: not there for Alice ("gone", which a delete counts as done).
    expect(results).toEqual({ done: [7_001n, 7_002n], gone: [7_003n, 7_009n], nextAfter: null });
    expect(ids(await bob.caller.plants.list({ after: 7_000n }))).toEqual([7_003n]);
    const tooMany = { selection: { kind: 'ids' as const, ids: Array.from({ length: 501 }, (_, index) => BigInt(index)) } };
    expect(await failureOf(alice.caller.plants.deleteMany(tooMany), tooMany)).toMatchObject({ kind: 'invalidValue' });
  });

  it('works through every matching plant a call at a time, leaving out the ones unticked and those added since', async () => {
    const carol = await signIn('bulk-carol');
    for (let index = 0n; index < 7n; index++) await carol.caller.plants.create({ id: 7_100n + index, name: `match ${index}`, tag: index === 3n ? 'keep' : 'sweep' });
    const { asOf } = await carol.caller.plants.page({ size: 10 });
    await carol.caller.plants.create({ id: 7_199n, name: 'match later', tag: 'sweep' });
    const selection = { kind: 'matching' as const, filters: { q: 'MATCH' }, asOf, except: [7_101n] };
    const retagged = await carol.caller.plants.retagMany({ selection, tag: 'swept' });
    expect(retagged).toMatchObject({ done: [7_100n, 7_102n, 7_103n, 7_104n, 7_105n, 7_106n], gone: [], nextAfter: null });
    // Each plant's tag before, for the undo; which the undo writes back only where the tag is still the new one.
    expect(new Map(retagged.previous.map((row) => [row.id, row.tag]))).toEqual(new Map([7_100n, 7_102n, 7_103n, 7_104n, 7_105n, 7_106n].map((id) => [id, id === 7_103n ? 'keep' : 'sweep'])));
    await carol.caller.plants.update({ id: 7_104n, tag: 'changed elsewhere' });
    const undone = await carol.caller.plants.retagMany({ selection: { kind: 'ids', ids: [7_100n, 7_102n, 7_104n, 7_105n, 7_106n] }, tag: 'sweep', onlyFrom: 'swept' });
    expect(undone).toMatchObject({ done: [7_100n, 7_102n, 7_105n, 7_106n], gone: [7_104n] });
    expect((await carol.caller.plants.retagMany({ selection: { kind: 'ids', ids: [7_103n] }, tag: 'keep', onlyFrom: 'swept' })).done).toEqual([7_103n]);
    await carol.caller.plants.retagMany({ selection: { kind: 'ids', ids: [7_100n, 7_102n, 7_103n, 7_104n, 7_105n, 7_106n] }, tag: 'swept' });
    const deleted = await carol.caller.plants.deleteMany({ selection: { ...selection, filters: { tag: 'swept' } } });
    expect(deleted.done).toHaveLength(6);
    expect(ids(await carol.caller.plants.list({}))).toEqual([7_101n, 7_199n]);
  });

  it('undoes a delete made with keepForUndo, for its deleter only, as it was (owner, creation time)', async () => {
    const dave = await signIn('undo-dave');
    const admin = await signIn('undo-admin', 'admin');
    await dave.caller.plants.create({ id: 7_300n, name: 'Back again', tag: 'x' });
    const before = (await admin.caller.plants.page({ size: 10, owner: 'undo-dave' })).rows[0]!;
    await admin.caller.plants.deleteMany({ selection: { kind: 'ids', ids: [7_300n] }, keepForUndo: true });
    expect(await dave.caller.plants.restore({ ids: [7_300n] })).toEqual({ restored: [], taken: [], missing: [7_300n] });
    expect(await admin.caller.plants.restore({ ids: [7_300n] })).toEqual({ restored: [7_300n], taken: [], missing: [] });
    expect((await admin.caller.plants.page({ size: 10, owner: 'undo-dave' })).rows[0]).toEqual(before);
    expect(await admin.caller.plants.restore({ ids: [7_300n] })).toEqual({ restored: [], taken: [], missing: [7_300n] });
  });

  it('proposes the id after the highest the caller sees, or a free random one when that is taken', async () => {
    const alice = await signIn('suggest-alice');
    const bob = await signIn('suggest-bob');
    await alice.caller.plants.create({ id: 8_000_001n, name: 'a' });
    expect(await alice.caller.plants.suggestId()).toEqual({ id: 8_000_002n });
    await bob.caller.plants.create({ id: 8_000_002n, name: 'b' });
    const { id } = await alice.caller.plants.suggestId();
    expect(id).not.toBe(8_000_002n);
    expect(await alice.caller.plants.create({ id, name: 'suggested' })).toEqual({ id, name: 'suggested' });
  });
});

describe('plants.page sorts and plants.tags', () => {
  it('pages by (key, id) in both directions for every sort, with untagged plants after every tag', async () => {
    const erin = await signIn('sort-erin');
    const names = ['beta', 'Alpha', 'alpha', 'Gamma', 'delta', 'Beta', 'epsilon'];
    const tags = ['b', undefined, 'a', 'c'];
    const plants = Array.from({ length: 23 }, (_, index) => ({ id: 7_400n + BigInt((index * 7) % 23), name: names[index % names.length]!, tag: tags[index % tags.length] }));
    for (const plant of plants) await erin.caller.plants.create({ id: plant.id, name: plant.name, ...(plant.tag ? { tag: plant.tag } : {}) });
    const walk = async (sort: { key: 'name' | 'tag' | 'id' | 'created' | 'owner'; dir: 'asc' | 'desc' }) => {
      const seen: bigint[] = [];
      let page = await erin.caller.plants.page({ size: 10, sort });
      seen.push(...page.rows.map((row) => row.id));
      while (page.offset + page.rows.length < page.total) {
        page = await erin.caller.plants.page({ size: 10, sort, cursor: { kind: 'after', id: page.rows[page.rows.length - 1]!.id } });
        expect(page.offset).toBe(seen.length);
        seen.push(...page.rows.map((row) => row.id));
      }
      // And back again from the end.
      const back = await erin.caller.plants.page({ size: 10, sort, cursor: { kind: 'before', id: seen[seen.length - 3]! } });
      expect(back.rows.map((row) => row.id)).toEqual(seen.slice(-13, -3));
      expect(back.offset).toBe(10);
      return seen;
    };
    const byId = (a: { id: bigint }, b: { id: bigint }) => (a.id < b.id ? -1 : 1);
    const expected = (compare: (a: (typeof plants)[number], b: (typeof plants)[number]) => number) => [...plants].sort((a, b) => compare(a, b) || byId(a, b)).map((plant) => plant.id);
    const byName = expected((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0));
    const byTag = expected((a, b) => (a.tag === b.tag ? 0 : a.tag === undefined ? 1 : b.tag === undefined ? -1 : a.tag < b.tag ? -1 : 1));
    expect(await walk({ key: 'name', dir: 'asc' })).toEqual(byName);
    expect(await walk({ key: 'name', dir: 'desc' })).toEqual([...byName].reverse());
    expect(await walk({ key: 'tag', dir: 'asc' })).toEqual(byTag);
    expect(await walk({ key: 'tag', dir: 'desc' })).toEqual([...byTag].reverse());
    expect(await walk({ key: 'id', dir: 'desc' })).toEqual(plants.map((plant) => plant.id).sort((a, b) => (a < b ? 1 : -1)));
    // Creation times can tie within a millisecond (then by id): every plant once is what holds here.
    expect((await walk({ key: 'created', dir: 'asc' })).sort((a, b) => (a < b ? -1 : 1))).toEqual(plants.map((plant) => plant.id).sort((a, b) => (a < b ? -1 : 1)));
    expect(await walk({ key: 'owner', dir: 'desc' })).toEqual(plants.map((plant) => plant.id).sort((a, b) => (a < b ? 1 : -1)));
  });

  it('offers the tags that exist, most used first, by a prefix in any case', async () => {
    const fay = await signIn('tags-fay');
    let id = 7_500n;
    for (const tag of ['Tropical', 'tropical', 'tropical', 'trailing', 'shade']) await fay.caller.plants.create({ id: id++, name: 'x', tag });
    expect(await fay.caller.plants.tags({ prefix: 'TR' })).toEqual([
      { tag: 'tropical', count: 2 },
      { tag: 'trailing', count: 1 },
      { tag: 'Tropical', count: 1 },
    ]);
    expect(await fay.caller.plants.tags({ prefix: 'tropi' })).toEqual([
      { tag: 'tropical', count: 2 },
      { tag: 'Tropical', count: 1 },
    ]);
  });
});
