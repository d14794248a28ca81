import { describe, expect, it } from 'vitest';

import { BODY_LIMIT_BYTES, JSON_MAX_DEPTH } from '@/shared/limits';

import { Refusal } from '../reply';

import { nestsDeeperThan, refuseDeepJson } from './json-depth';

const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;

describe('the JSON depth scan', () => {
  it('counts arrays and objects alike, up to the limit and one past it', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":{"c":1}}}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":{"c":[1]}}}', 3)).toBe(true);
    expect(nestsDeeperThan('[[1],[2],[3],{"a":[4]}]', 3)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(`{"a":"${'['.repeat(100)}"}`, 1)).toBe(false);
    expect(nestsDeeperThan(`{"a\\"[[[":"\\\\","b":"\\"${'{'.repeat(10)}"}`, 1)).toBe(false);
    // An escaped backslash ends before the quote, which closes the string: the brackets after it count.
    expect(nestsDeeperThan('["\\\\",[[1]]]', 2)).toBe(true);
  });

  it('counts a closing brace as a closing bracket: siblings are not nesting', () => {
    const siblings = (item: string) => `[${Array(JSON_MAX_DEPTH * 2).fill(item).join(',')}]`;
    expect(nestsDeeperThan(siblings('{}'), 2)).toBe(false);
    expect(nestsDeeperThan(siblings('{"a":{"b":1}}'), 3)).toBe(false);
    expect(nestsDeeperThan(siblings('[]'), 2)).toBe(false);
  });

  it('cannot be fooled by closing brackets first, or by text that is not JSON', () => {
    expect(nestsDeeperThan(`${']'.repeat(50)}${'['.repeat(5)}`, 4)).toBe(true);
    expect(nestsDeeperThan('"unterminated [[[[[[', 1)).toBe(false);
    expect(nestsDeeperThan('', 0)).toBe(false);
  });

  it(`refuses more than ${JSON_MAX_DEPTH} levels with 400 / 40022, and takes ${JSON_MAX_DEPTH}`, () => {
    expect(() => refuseDeepJson(nested(JSON_MAX_DEPTH), 'the body')).not.toThrow();
    let thrown: unknown;
    try {
      refuseDeepJson(nested(BODY_LIMIT_BYTES / 2), 'the body');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Refusal);
    expect((thrown as Refusal).problem).toEqual({ kind: 'jsonTooDeep', message: `the body nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep` });
  });
});
