import { describe, expect, it } from 'vitest';

import { parseExactJson, stringifyExactJson } from './exact-json';

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
