import { describe, expect, it } from 'vitest';

import { listed } from '@/shared/messages';
import { INT64_MAX, INT64_MIN, PLANT_FIELD_NAMES } from '@/shared/plants';
import { callerFor, failureOf, signIn } from '@test-support/actors';

describe('plants router', () => {
  it('creates, lists and deletes a plant, keeping int64 ids exact', async () => {
    const { caller } = await signIn('router-owner');
    for (const id of [INT64_MIN, 9007199254740993n, INT64_MAX]) {
      expect(await caller.plants.create({ id, name: `plant ${id}` })).toEqual({ id, name: `plant ${id}` });
    }
    const listed = await caller.plants.list({});
    expect(listed.map((plant) => plant.id)).toEqual([INT64_MIN, 9007199254740993n, INT64_MAX]);
    await caller.plants.delete({ id: 9007199254740993n });
    expect((await caller.plants.list({})).map((plant) => plant.id)).toEqual([INT64_MIN, INT64_MAX]);
  });

  it('leaves tag out of a plant that has none, and keeps it when given', async () => {
    const { caller } = await signIn('router-tagger');
    const untagged = await caller.plants.create({ id: 101n, name: 'Fern' });
    expect(untagged).not.toHaveProperty('tag');
    expect(await caller.plants.create({ id: 102n, name: 'Palm', tag: 'tropical' })).toEqual({ id: 102n, name: 'Palm', tag: 'tropical' });
  });

  it('gives members their own plants only and admins every plant', async () => {
    const alice = await signIn('router-alice');
    const bob = await signIn('router-bob');
    const admin = await signIn('router-admin', 'admin');
    await alice.caller.plants.create({ id: 201n, name: "Alice's" });
    await bob.caller.plants.create({ id: 202n, name: "Bob's" });

    expect((await alice.caller.plants.list({ after: 200n, limit: 10 })).map((plant) => plant.id)).toEqual([201n]);
    expect((await bob.caller.plants.list({ after: 200n, limit: 10 })).map((plant) => plant.id)).toEqual([202n]);
    expect((await admin.caller.plants.list({ after: 200n, limit: 2 })).map((plant) => plant.id)).toEqual([201n, 202n]);

    // Someone else's plant is answered exactly like a missing one.
    expect(await failureOf(bob.caller.plants.delete({ id: 201n }))).toMatchObject({ code: 'NOT_FOUND', kind: 'plantNotFound' });
    expect(await failureOf(bob.caller.plants.delete({ id: 299n }))).toMatchObject({ code: 'NOT_FOUND', kind: 'plantNotFound' });
    await admin.caller.plants.delete({ id: 201n });
    expect(await alice.caller.plants.list({ after: 200n })).toEqual([]);
  });

  it('refuses an id that any user already took', async () => {
    const alice = await signIn('router-first');
    const bob = await signIn('router-second');
    await alice.caller.plants.create({ id: 301n, name: 'First' });
    expect(await failureOf(bob.caller.plants.create({ id: 301n, name: 'Second' }))).toMatchObject({
      code: 'BAD_REQUEST',
      kind: 'plantIdTaken',
      field: 'id',
      message: 'a plant with id 301 already exists',
    });
  });

  it('pages by id and tells the REST door the next page only when more plants follow', async () => {
    const { caller, context } = await signIn('router-pager');
    for (let id = 401n; id <= 404n; id++) await caller.plants.create({ id, name: `p${id}` });

    expect((await caller.plants.list({ after: 400n, limit: 3 })).map((plant) => plant.id)).toEqual([401n, 402n, 403n]);
    expect(context.responseHints.nextPageQuery).toEqual({ limit: '3', after: '403' });

    context.responseHints.nextPageQuery = undefined;
    expect((await caller.plants.list({ after: 402n, limit: 2 })).map((plant) => plant.id)).toEqual([403n, 404n]);
    expect(context.responseHints.nextPageQuery).toBeUndefined();
  });

  it('names the field and the rule when the input is invalid', async () => {
    const { caller } = await signIn('router-validator');
    const cases = [
      [{ name: 'x' }, 'missingField', 'id is required'],
      [{ id: 1, name: 'x' }, 'wrongType', 'id must be an integer'],
      [{ id: INT64_MAX + 1n, name: 'x' }, 'invalidValue', `id must be at most ${INT64_MAX}`],
      [{ id: 1n, name: 'x'.repeat(201) }, 'invalidValue', 'name must be at most 200 characters'],
      [{ id: 1n, name: '   ' }, 'invalidValue', 'name must not be only white space'],
      [{ id: 1n, name: 'a\u0007b' }, 'invalidValue', 'name must not contain control characters'],
      [{ id: 1n, name: 'x', tag: '' }, 'invalidValue', 'tag must not be empty'],
      [{ id: 1n, name: 'x', ownerId: 1 }, 'unknownField', `unknown field "ownerId": a new plant has only ${listed(['id', ...PLANT_FIELD_NAMES])}`],
    ] as const;
    for (const [input, kind, message] of cases) {
      // @ts-expect-error the point is input the types would not allow
      expect(await failureOf(caller.plants.create(input), input)).toMatchObject({ code: 'BAD_REQUEST', kind, message });
    }
  });

  it('refuses text that is not well-formed Unicode, and stores nothing', async () => {
    const { caller } = await signIn('router-surrogate');
    for (const name of ['a\ud800', '\udc00\\', `${'a'.repeat(199)}\ud800`]) {
      expect(await failureOf(caller.plants.create({ id: 601n, name }), { id: 601n, name })).toMatchObject({
        kind: 'invalidValue',
        message: 'name must be well-formed Unicode (no lone surrogates)',
      });
    }
    expect(await caller.plants.create({ id: 601n, name: 'whole' })).toEqual({ id: 601n, name: 'whole' });
  });

  it('counts name length in characters, not UTF-16 units', async () => {
    const { caller } = await signIn('router-emoji');
    const name = '🌵'.repeat(200);
    expect(await caller.plants.create({ id: 501n, name })).toEqual({ id: 501n, name });
  });
});

describe('auth on procedures', () => {
  it('refuses a caller without a valid token', async () => {
    const { caller: anonymous } = await callerFor(null);
    const { caller: forged } = await callerFor(`Bearer pst_${'A'.repeat(43)}`);
    expect(await failureOf(anonymous.plants.list({}))).toMatchObject({ code: 'UNAUTHORIZED', kind: 'missingToken' });
    expect(await failureOf(forged.plants.list({}))).toMatchObject({ code: 'UNAUTHORIZED', kind: 'invalidToken' });
  });

  it('lets only admins manage tokens', async () => {
    const member = await signIn('router-member');
    const admin = await signIn('router-boss', 'admin');
    expect(await failureOf(member.caller.tokens.list())).toMatchObject({ code: 'FORBIDDEN', kind: 'forbidden' });
    const created = await admin.caller.tokens.create({ userName: 'router-newcomer', role: 'member' });
    expect(created.token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    const listed = await admin.caller.tokens.list();
    const summary = listed.find((token) => token.id === created.id);
    expect(summary).toMatchObject({ userName: 'router-newcomer', role: 'member', revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.token);
    await admin.caller.tokens.revoke({ id: created.id });
    const { checkToken } = await import('@/server/tokens/service');
    expect(await checkToken(created.token)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('durability', () => {
  it('syncs every commit to disk (synchronous=FULL) on the connection the app uses', async () => {
    const { db } = await import('@/server/db/client');
    const rows = await db.$queryRawUnsafe<{ synchronous: bigint }[]>('PRAGMA synchronous');
    expect(rows.map((row) => Number(row.synchronous))).toEqual([2]);
  });
});
