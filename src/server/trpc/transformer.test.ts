import superjson from 'superjson';
import { describe, expect, it } from 'vitest';

import { AppError } from '@/shared/errors';
import { BODY_LIMIT_BYTES, kib } from '@/shared/limits';

import { deserializeCanonicalInput } from './transformer';

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
