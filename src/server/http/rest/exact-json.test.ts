import { LosslessNumber, stringify as losslessStringify } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import { parseExactJson, stringifyExactJson } from './exact-json';
import { seededRandom } from '@test-support/seeded-random';

describe('exact JSON', () => {
  it('keeps int64 integers exact both ways', () => {
    const text = '{"min":-9223372036854775808,"unsafe":9007199254740993,"max":9223372036854775807}';
    const value = parseExactJson(text) as Record<string, unknown>;
    expect(value).toEqual({ min: -(2n ** 63n), unsafe: 9007199254740993n, max: 2n ** 63n - 1n });
    expect(stringifyExactJson(value)).toBe(text);
  });

  it('reads fractions and exponents as doubles, so an id written that way is not an integer', () => {
    expect(parseExactJson('[1.5, 1e3, 7]')).toEqual([1.5, 1000, 7n]);
  });

  it('refuses a key given twice, even with the same value', () => {
    expect(() => parseExactJson('{"id": 1, "id": 1}')).toThrow('the key "id" is given twice');
  });

  it('keeps __proto__ an ordinary key', () => {
    const value = parseExactJson('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__']);
  });

  it('leaves out undefined members, as JSON.stringify does', () => {
    expect(stringifyExactJson({ id: 1n, tag: undefined })).toBe('{"id":1}');
  });
});

describe('duplicate keys', () => {
  it('are found however they are written, and at any depth', () => {
    expect(() => parseExactJson('{"a": {"b": 1, "\\u0062": 1}}')).toThrow('the key "b" is given twice');
    expect(() => parseExactJson('[{"x": 1}, {"x": 1}]')).not.toThrow();
    expect(() => parseExactJson('{"a": "\\"b\\":", "b": ":"}')).not.toThrow();
    expect(() => parseExactJson('{"a": ["a", {"a": 1}], "b": 2}')).not.toThrow();
  });
});

/** Every class of character JSON escapes or a writer could get wrong. */
const STRING_PIECES = [
  'a', 'Monstera deliciosa', ' ', '"', '\\', '/', "'", '\b', '\f', '\n', '\r', '\t', '\0', '\x01', '\x1f', '\x7f', '\x80', '\xa0', 'é',
  '\u2028', '\u2029', '\ud800', '\udbff', '\udc00', '\udfff', '😀', '\ud83d', '\ude00', '\ufeff', '\uffff', '\u0301', '</script>', '\\u0000', '%',
];
const BIGINTS = [0n, 1n, -1n, 7n, 20n, 2n ** 31n, 2n ** 53n - 1n, -(2n ** 53n - 1n), 2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, 9007199254740993n, 2n ** 63n - 1n, -(2n ** 63n), 10n ** 21n, 10n ** 30n];
const NUMBERS = [0, -0, 1, -1, 1.5, 0.1, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, NaN, Infinity, -Infinity];
const KEYS = ['id', 'name', 'tag', 'items', '', '__proto__', 'constructor', 'toString', '0', '1', '01', '-1', '4294967295', 'a"b', 'a\\b', '\n', '\u2028', '\ud800', 'é', '😀'];

function generatedValue(next: (below: number) => number, depth: number): unknown {
  const text = () => Array.from({ length: next(5) }, () => STRING_PIECES[next(STRING_PIECES.length)]).join('');
  switch (next(depth > 3 ? 9 : 13)) {
    case 0: return text();
    case 1: return BIGINTS[next(BIGINTS.length)];
    case 2: return BigInt(next(2 ** 30)) * (next(2) ? 1n : -1n);
    case 3: return NUMBERS[next(NUMBERS.length)];
    case 4: return [true, false, null, undefined][next(4)];
    case 5: return new Date(next(3) === 0 ? NaN : next(2 ** 30) * 1000);
    case 6: return [new Boolean(next(2)), new Number(NUMBERS[next(NUMBERS.length)]), new String(text()), Object(1n)][next(4)];
    case 7: return [() => 1, Symbol('s'), new Map([[1, 2]]), /x/g, new Uint8Array([1, 2])][next(5)];
    case 8: return new LosslessNumber(String(BIGINTS[next(BIGINTS.length)]));
    case 9:
    case 10: {
      const array = Array.from({ length: next(5) }, () => generatedValue(next, depth + 1));
      if (next(8) === 0) array.length += 2; // holes
      return array;
    }
    case 11: {
      // Built by JSON.parse's rules (own __proto__), then filled.
      const object = JSON.parse('{}') as Record<string, unknown>;
      for (let member = next(5); member > 0; member--) Object.defineProperty(object, KEYS[next(KEYS.length)]!, { value: generatedValue(next, depth + 1), enumerable: true, writable: true, configurable: true });
      return object;
    }
    default: {
      const inner = generatedValue(next, depth + 1);
      return { toJSON: () => inner };
    }
  }
}

/** The answers' own shapes: a page of plants (some without a tag), one plant, a problem, the ETag's input. */
function generatedAnswer(next: (below: number) => number): unknown {
  const text = () => Array.from({ length: 1 + next(6) }, () => STRING_PIECES[next(STRING_PIECES.length)]).join('');
  const id = () => (next(4) === 0 ? BIGINTS[next(BIGINTS.length)]! : BigInt(1 + next(2 ** 31)));
  const plant = () => (next(3) === 0 ? { id: id(), name: text() } : { id: id(), name: text(), tag: next(5) === 0 ? undefined : text() });
  switch (next(4)) {
    case 0: return Array.from({ length: next(21) }, plant);
    case 1: return plant();
    case 2: return { error: text(), message: text(), details: next(2) ? [{ path: [text(), next(10)], message: text() }] : undefined };
    default: return { limit: BigInt(1 + next(1000)), after: next(2) ? id() : undefined, tag: next(2) ? text() : undefined, q: next(2) ? null : text(), at: new Date(next(2 ** 30) * 1000) };
  }
}

describe('stringifyExactJson, a hand-written writer of what lossless-json writes', () => {
  it('writes what lossless-json writes, byte for byte, on 100,000 generated values and answers', () => {
    const next = seededRandom(21);
    for (let count = 0; count < 100_000; count++) {
      const value = count % 2 === 0 ? generatedValue(next, 0) : generatedAnswer(next);
      const expected = losslessStringify(value);
      if (expected === undefined) {
        expect(() => stringifyExactJson(value)).toThrow(TypeError);
        continue;
      }
      const written = stringifyExactJson(value);
      if (written !== expected) expect(written, `value ${count}`).toBe(expected);
    }
  });

  it('writes strings as JSON.stringify does: controls and lone surrogates escaped, U+2028 and U+2029 as they are', () => {
    for (const piece of STRING_PIECES) expect(stringifyExactJson({ id: 1n, name: piece })).toBe(`{"id":1,"name":${JSON.stringify(piece)}}`);
    expect(stringifyExactJson(['\u2028\u2029'])).toBe('["\u2028\u2029"]');
    expect(stringifyExactJson(['\ud800'])).toBe('["\\ud800"]');
  });

  it('keeps every digit of ids at and beyond 2^53, and an own __proto__ as a key', () => {
    expect(stringifyExactJson([{ id: 2n ** 53n - 1n }, { id: 2n ** 53n }, { id: 2n ** 53n + 1n }, { id: -(2n ** 63n) }])).toBe(
      '[{"id":9007199254740991},{"id":9007199254740992},{"id":9007199254740993},{"id":-9223372036854775808}]',
    );
    expect(stringifyExactJson(parseExactJson('{"__proto__":{"id":7}}'))).toBe('{"__proto__":{"id":7}}');
  });

  it('writes a large id exactly beside strings with NUL and escaped backslashes', () => {
    const big = 2n ** 62n;
    for (const name of ['\0', '\u0000', '\0' + String(big), '\\u0000' + String(big), '"\\u0000', '\\\0']) {
      expect(stringifyExactJson([{ id: big, name }, { id: -big, name: 'x', tag: name }])).toBe(losslessStringify([{ id: big, name }, { id: -big, name: 'x', tag: name }]));
      expect(stringifyExactJson({ [name]: big })).toBe(losslessStringify({ [name]: big }));
    }
  });
});
