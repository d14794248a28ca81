import { describe, expect, it } from 'vitest';

import { parseExactJson } from '@/server/http/rest/exact-json';

import { canonicalJson, requestFingerprint } from './fingerprint';

/** As the REST chain reads a body: exact integers, then the fingerprint of the operation and that value. */
const fingerprint = (text: string, operation = 'POST /plants') => requestFingerprint(operation, parseExactJson(text));

describe('the same body', () => {
  it('ignores white space, member order, string escapes, and how a fraction or an exponent is spelled', () => {
    const reference = fingerprint('{"id":9007199254740993,"name":"Fern","tag":"shade","extra":{"b":[1.0,2e0,0.5],"a":null}}');
    for (const same of [
      '{ "tag":"shade" , "name":"Fern", "id":9007199254740993, "extra":{"a":null,"b":[1.0,2e0,0.5]} }',
      '{"id":9007199254740993,"name":"\\u0046ern","tag":"sh\\u0061de","extra":{"b":[1.00,2E0,5e-1],"a":null}}',
      '{"id":9007199254740993,"name":"Fern","tag":"shade","extra":{"b":[10e-1,0.2E1,0.50],"a":null}}',
    ]) {
      expect(fingerprint(same), same).toBe(reference);
    }
  });

  it('tells an integer from the same number written with a fraction or an exponent, as the operation does', () => {
    const reference = fingerprint('{"id":5002,"name":"Fern"}');
    for (const other of ['{"id":5002.0,"name":"Fern"}', '{"id":5.002e3,"name":"Fern"}', '{"id":5002e0,"name":"Fern"}']) {
      expect(fingerprint(other), other).not.toBe(reference);
    }
    expect(fingerprint('{"id":5002.0,"name":"Fern"}')).toBe(fingerprint('{"id":5.002e3,"name":"Fern"}'));
  });

  it('tells apart every other difference', () => {
    const reference = fingerprint('{"id":7,"name":"Fern"}');
    for (const other of [
      '{"id":8,"name":"Fern"}',
      '{"id":7,"name":"fern"}',
      '{"id":7,"name":"Fern "}',
      '{"id":7,"name":"Fern","tag":"x"}',
      '{"id":"7","name":"Fern"}',
      '{"id":7,"name":["Fern"]}',
      '{"id":7.5,"name":"Fern"}',
      '{"id":7,"name":"Fe\\u0301rn"}',
    ]) {
      expect(fingerprint(other), other).not.toBe(reference);
    }
    expect(fingerprint('{"id":7,"name":"Fern"}', 'POST /other')).not.toBe(reference);
  });

  it('writes a canonical form that cannot be confused across types', () => {
    expect(canonicalJson({ b: 1n, a: [true, null, 'x', 0.5, -0, 3] })).toBe('{"a":[true,null,"x",0.5,0.0,3.0],"b":1}');
    expect(canonicalJson({ a: '1' })).not.toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ a: Number.POSITIVE_INFINITY })).not.toBe(canonicalJson({ a: null }));
    expect(canonicalJson({ 'a,"b"': 1n })).toBe('{"a,\\"b\\"":1}');
  });
});

describe('the fingerprint', () => {
  it('keeps the operation apart from the body: no operation and body run together into another pair', () => {
    expect(requestFingerprint('PATCH /plants/1', 23n)).not.toBe(requestFingerprint('PATCH /plants/12', 3n));
  });

  it('refuses what is not a JSON value instead of writing something for it', () => {
    for (const value of [undefined, () => 1, Symbol('x'), { a: undefined }, [1, undefined]]) {
      expect(() => canonicalJson(value), String(typeof value)).toThrow(/^(?:undefined|function|symbol) is not a JSON value$/);
    }
  });
});
