import fc from 'fast-check';
import superjson, { type SuperJSONResult } from 'superjson';
import { describe, expect, it, vi } from 'vitest';

import { AppError } from '@/shared/errors';
import { BODY_LIMIT_BYTES, kib } from '@/shared/limits';

import { deserializeCanonicalInput, writeOutput } from './transformer';

/** The input as a client sends it: superjson's writing, through JSON. */
const sent = (value: unknown) => JSON.parse(JSON.stringify(superjson.serialize(value))) as unknown;

function refusal(payload: unknown): { kind: string; field?: string } | undefined {
  try {
    deserializeCanonicalInput(payload);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { kind: error.kind, field: error.field };
  }
}

describe('the tRPC input: superjson’s own writing, and nothing else', () => {
  it('takes what superjson writes for every input the admin page sends, and reads it back exactly', () => {
    for (const value of [
      { id: 9007199254740993n, name: 'Fern', tag: 'shade' },
      { size: 25, cursor: { kind: 'before', id: -9223372036854775808n }, q: 'fern' },
      { ids: [1n, 2n, 3n] },
      { name: 'x', tag: null, note: undefined },
      { when: new Date(0), list: [[], {}, [{ a: [true, false, 0.5, -1] }]] },
      {},
    ]) {
      expect(deserializeCanonicalInput(sent(value)), JSON.stringify(sent(value))).toEqual(value);
    }
  });

  it('refuses a bigint that is not in decimal digits, naming the field', () => {
    for (const text of [' 25 ', '0x1A', '', '007', '+5']) {
      expect(refusal({ json: { id: text, name: 'x' }, meta: { values: { id: ['bigint'] } } }), text).toEqual({ kind: 'wrongType', field: 'id' });
    }
  });

  it('refuses a value copied to a path the client never sent, types no input takes, and numbers JSON writes differently', () => {
    expect(refusal({ json: { name: 'x', ownerId: null }, meta: { referentialEqualities: { name: ['ownerId'] } } })).toEqual({ kind: 'invalidJson', field: 'ownerId' });
    for (const type of ['set', 'map', 'regexp', 'Error']) {
      expect(refusal({ json: { tag: [] }, meta: { values: { tag: [type] } } }), type).toMatchObject({ kind: 'invalidJson' });
    }
    expect(refusal({ json: { limit: -0 } })).toEqual({ kind: 'invalidJson', field: 'limit' });
    expect(refusal({ json: { limit: 'NaN' }, meta: { values: { limit: ['number'] } } })).toBeUndefined();
  });

  it(`checks a ${kib(BODY_LIMIT_BYTES)} input of 21,000 empty arrays and objects in one walk, to its last element`, () => {
    const tag = Array.from({ length: 21_000 }, (_, index) => (index % 2 === 0 ? [] : {}));
    const payload = { json: { id: '7', name: 'x', tag }, meta: { values: { id: ['bigint'], 'tag.20999': ['bigint'] } } };
    tag[20_999] = '08' as never;
    // As large as a body may be: the widest input that reaches the walk.
    expect(JSON.stringify(payload).length).toBeGreaterThan(BODY_LIMIT_BYTES * 0.9);
    expect(JSON.stringify(payload).length).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
    expect(refusal(payload)).toEqual({ kind: 'wrongType', field: 'tag.20999' });
  });
});

/** superjson's writing without its `referentialEqualities`: what writeOutput writes for values that share no object. */
function withoutEqualities(result: SuperJSONResult): SuperJSONResult {
  if (!result.meta) return result;
  const { referentialEqualities: _, ...meta } = result.meta;
  return meta.values === undefined ? { json: result.json } : { json: result.json, meta };
}

/** Keys that need superjson's escaping in a path, that JavaScript orders first (integers), and plain ones. */
const key = fc.oneof(fc.constantFrom('id', 'a.b', 'a\\b', '\\.', '.', '0', '10', '', 'items', 'constructor', '__proto__'), fc.string({ maxLength: 4 }));
const { tree } = fc.letrec<{ tree: unknown; leaf: unknown }>((tie) => ({
  leaf: fc.oneof(
    fc.string({ maxLength: 6 }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    // Numbers JSON lacks (NaN, ±Infinity, -0) send the whole value to superjson: a case below has them.
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((number) => (Object.is(number, -0) ? 0 : number)),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    // superjson itself reads an invalid Date back as null; the walker's own case below covers it.
    fc.date({ noInvalidDate: true }),
  ),
  tree: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('tree'), { maxLength: 4 }), fc.dictionary(key, tie('tree'), { maxKeys: 4 })),
}));

describe('the tRPC output: superjson’s writing in one pass', () => {
  it('writes what superjson writes, and reads back as the value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(tree, { maxLength: 5 }), fc.dictionary(key, tree, { maxKeys: 5 })), (value) => {
        let expected: SuperJSONResult;
        try {
          expected = withoutEqualities(superjson.serialize(value));
        } catch (refusal) {
          // superjson refuses `__proto__` and its like as keys; so must this.
          expect(() => writeOutput(value)).toThrow((refusal as Error).message);
          return;
        }
        const serialize = vi.spyOn(superjson, 'serialize');
        const written = writeOutput(value);
        // Written in its own pass, not handed to superjson: these values share no object and hold no odd number.
        expect(serialize).not.toHaveBeenCalled();
        serialize.mockRestore();
        // The same JSON and annotations; their order may differ (superjson's objects put integer-like keys first
        // at each level), and means nothing to a reader: each annotation names its own leaf.
        expect(JSON.stringify(written.json)).toBe(JSON.stringify(expected.json));
        expect(written.meta).toEqual(expected.meta);
        expect(superjson.deserialize(JSON.parse(JSON.stringify(written)) as SuperJSONResult)).toEqual(value);
      }),
      { numRuns: Number(process.env.RUNS ?? 2_000) },
    );
  });

  it('writes a page of plants as superjson does, bigint ids and a missing tag annotated by path', () => {
    const page = { items: [{ id: 9007199254740993n, name: 'Fern' }, { id: -1n, name: 'Moss', tag: undefined }], next: { after: 9007199254740993n } };
    expect(writeOutput(page)).toEqual({
      json: { items: [{ id: '9007199254740993', name: 'Fern' }, { id: '-1', name: 'Moss', tag: null }], next: { after: '9007199254740993' } },
      meta: { values: { 'items.0.id': ['bigint'], 'items.1.id': ['bigint'], 'items.1.tag': ['undefined'], 'next.after': ['bigint'] }, v: 1 },
    });
    // superjson's own adds that the two equal bigints are "the same object", which no reader needs.
    expect(superjson.serialize(page).meta?.referentialEqualities).toEqual({ 'next.after': ['items.0.id'] });
    expect(superjson.deserialize(writeOutput(page))).toEqual(page);
  });

  it('leaves to superjson what needs its walker: shared objects, classes, sparse arrays, odd numbers, invalid dates, a bare root', () => {
    const shared = { name: 'Fern' };
    const sharedList = [1n];
    const date = new Date(0);
    class Plant {
      id = 1;
    }
    for (const value of [
      { a: shared, b: [shared] },
      { a: sharedList, b: { c: sharedList } },
      { a: date, b: date },
      { set: new Set([1n]), map: new Map([['a', 1]]) },
      { plant: new Plant() },
      { error: new Error('x') },
      { sparse: [1, , 3] },
      { numbers: [NaN, Infinity, -Infinity, -0] },
      { when: new Date(NaN) },
      { pattern: /x/ },
      7n,
      undefined,
      'text',
      new Date(0),
      null,
    ]) {
      expect(JSON.stringify(writeOutput(value))).toBe(JSON.stringify(superjson.serialize(value)));
    }
  });
});
