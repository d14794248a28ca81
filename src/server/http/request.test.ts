import { describe, expect, it } from 'vitest';

import { PLACEHOLDER_ORIGIN, plainTarget, type RequestUrl } from './request';
import { seededRandom } from '@test-support/seeded-random';

/**
 * `plainTarget` reads a request target without the URL parser; every target it answers must give what the
 * parser gives (pathname, search, query parameters), or the doors would route, filter and log another request
 * than the one a parsed URL names. Compared on targets built from pieces an attacker would try.
 */
const PIECES = [
  ...'abzAZ09-._~!$&\'()*+,;=:@/?#%\\"<>`{}|^[] ',
  '/',
  '//',
  '.',
  '..',
  '/./',
  '/../',
  '/.',
  '/..',
  '%2e',
  '%2E',
  '.%2e',
  '%2e.',
  '%2F',
  '%5C',
  '%25',
  '%',
  '%z',
  '%C3%A9',
  '%FF',
  '?',
  '??',
  '&',
  '=',
  '+',
  '#',
  '\t',
  '\n',
  '\r',
  '\0',
  '\x1f',
  '\x7f',
  '\x80',
  '\xa0',
  '\xff',
  'é',
  '\u2028',
  '\ufeff',
  '\uffff',
  '\ud800',
  '\udc00',
  '😀',
  'api',
  'plants',
  'limit=20',
  'q=a',
  'cursor=eyJpZCI6MX0',
  '/api/plants',
  '/api/plants/1',
];

/** Near misses among pieces the fast path reads: most targets built from these alone are plain. */
const PLAIN_PIECES = [
  ...'abzAZ09-._~!$&\'()*+,;=:@/?%',
  ...['api', 'plants', 'a', 'b', 'x=1', '&y=2', 'limit=20', '%C3%A9', 'a.b', '..a', '.a', 'a..'].flatMap((piece) => [piece, piece, piece]),
  '/',
  '.',
  '..',
  '?',
  '%2e',
  "'",
];

function generatedTargets(count: number): string[] {
  const next = seededRandom(21);
  const targets = new Set<string>(['/', '/?', '/api/plants?', '/api/plants?limit=20', '/api/plants/', '/api/plants//1', "/a'b?c'd", '/.a/..b/...?x=.']);
  while (targets.size < count) {
    // Half from every piece (mostly left to the parser), half from near misses (mostly read here).
    const from = next(2) === 0 ? PIECES : PLAIN_PIECES;
    let target = '/';
    const pieces = 1 + next(12);
    for (let piece = 0; piece < pieces; piece++) target += from[next(from.length)];
    targets.add(target);
  }
  return [...targets];
}

const parts = (url: RequestUrl) => ({ pathname: url.pathname, search: url.search, parameters: [...url.searchParams] });

describe('plainTarget, the request target read without the URL parser', () => {
  it('gives the URL parser’s pathname, search and query parameters for every target it reads, and reads the common ones', () => {
    const targets = generatedTargets(200_000);
    let read = 0;
    // Compared as text and reported together: an expect() per target made this test take seconds more than
    // the comparison itself, and time out on a busy machine (5 s at load 14).
    const differences: { target: string; plain: string; parsed: string }[] = [];
    for (const target of targets) {
      const plain = plainTarget(target);
      if (!plain) continue;
      read++;
      const [mine, parsed] = [JSON.stringify(parts(plain)), JSON.stringify(parts(new URL(PLACEHOLDER_ORIGIN + target)))];
      if (mine !== parsed && differences.push({ target, plain: mine, parsed }) >= 10) break;
    }
    expect(differences).toEqual([]);
    // Not a test that passes by declining everything: a good share of the generated targets take the fast path.
    expect(read).toBeGreaterThan(targets.length / 5);
    for (const common of ['/', '/api/plants', '/api/plants?limit=20', '/api/plants?limit=20&cursor=eyJpZCI6MX0&q=%C3%A9', '/api/plants/12', '/api/trpc/plants.list,plants.page?batch=1&input=%7B%7D']) {
      expect(plainTarget(common), common).toBeDefined();
    }
  });

  it('leaves to the parser what it would change: dots, percent signs and backslashes in the path, repeated slashes, fragments, quotes in the query, controls, non-ASCII', () => {
    for (const target of ['/api/../x', '/api/./x', '/..', '/.', '/api/%2e%2e/x', '/api\\x', '//host/x', '/api//plants', '/a#b', "/a?b='", '/a b', '/a\tb', '/é', '/a?é', '', 'api', '*']) {
      expect(plainTarget(target), JSON.stringify(target)).toBeUndefined();
    }
  });

  it('reads an overlong target in one pass', () => {
    const started = performance.now();
    for (const target of [`/${'a/'.repeat(8_000)}`, `/${'/'.repeat(16_000)}`, `/a?${'x=1&'.repeat(4_000)}`, `/${'.'.repeat(16_000)}`]) plainTarget(target);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
