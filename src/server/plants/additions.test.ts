import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';

import { problemFromError } from '@/server/problems';
import { signIn } from '@/test/actors';

/** Version 1.1.0's additions on the tRPC door: PATCH, the list filters, and the admin page's procedures. */

async function failureOf(promise: Promise<unknown>, input?: unknown) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return { code: (error as TRPCError).code, ...problemFromError(error, input) };
}

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
    expect(await failureOf(caller.plants.update(unknown as never), unknown)).toMatchObject({ kind: 'unknownField', message: 'unknown field "ownerId": a patch changes only name and tag' });
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

describe('plants.deleteMany and plants.suggestId', () => {
  it("deletes what it may, and says per id what it did not (gone already, or another's)", async () => {
    const alice = await signIn('bulk-alice');
    const bob = await signIn('bulk-bob');
    for (const id of [7_001n, 7_002n]) await alice.caller.plants.create({ id, name: `p${id}` });
    await bob.caller.plants.create({ id: 7_003n, name: "Bob's" });
    const results = await alice.caller.plants.deleteMany({ ids: [7_001n, 7_003n, 7_002n, 7_009n] });
    expect(results).toEqual([
      { id: 7_001n, deleted: true },
      { id: 7_003n, deleted: false, message: expect.stringContaining('no plant with id 7003') },
      { id: 7_002n, deleted: true },
      { id: 7_009n, deleted: false, message: expect.stringContaining('no plant with id 7009') },
    ]);
    expect(ids(await bob.caller.plants.list({ after: 7_000n }))).toEqual([7_003n]);
    const tooMany = { ids: Array.from({ length: 101 }, (_, index) => BigInt(index)) };
    expect(await failureOf(alice.caller.plants.deleteMany(tooMany), tooMany)).toMatchObject({ kind: 'invalidValue' });
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
