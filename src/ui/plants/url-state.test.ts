import { describe, expect, it } from 'vitest';

import { plantsHref, readPlantsQuery, sameCursor } from './url-state';

const read = (search: string) => readPlantsQuery(new URLSearchParams(search));

describe('the plants view’s address', () => {
  it('reads filters, size and cursor, and writes them back the same', () => {
    for (const href of ['/plants', '/plants?q=fern&tag=shade&owner=alice&sort=name&dir=desc&size=50&after=9223372036854775807', '/plants?sort=created', '/plants?tag=a&page=last', '/plants?before=-9223372036854775808']) {
      expect(plantsHref(read(href.split('?')[1] ?? ''))).toBe(href);
    }
    expect(read('after=9007199254740993').cursor).toEqual({ kind: 'after', id: 9007199254740993n });
  });

  it('ignores what it cannot read instead of failing: sizes off the list, ids out of range or not digits, empty and long text', () => {
    expect(read('size=7&after=9223372036854775808&q=&tag=' + 't'.repeat(101) + '&sort=colour&dir=up')).toEqual({
      size: 25,
      sort: { key: 'id', dir: 'asc' },
      cursor: undefined,
      q: undefined,
      tag: undefined,
      owner: undefined,
    });
    // What stays in the address is what the view shows: size=33 and a 300-character q are dropped from it.
    expect(plantsHref(read('size=33&q=' + 'x'.repeat(300) + '&tag=fern'))).toBe('/plants?tag=fern');
    expect(read('before=1e3').cursor).toBeUndefined();
    expect(read('after=abc&before=5').cursor).toEqual({ kind: 'before', id: 5n });
  });

  it('writes the default size nowhere, and a search with characters that need encoding exactly', () => {
    expect(plantsHref({ size: 25, sort: { key: 'id', dir: 'asc' }, q: 'a&b=c ß' })).toBe('/plants?q=a%26b%3Dc+%C3%9F');
    expect(read('q=a%26b%3Dc+%C3%9F').q).toBe('a&b=c ß');
  });

  it('compares cursors by kind and id', () => {
    expect(sameCursor(undefined, undefined)).toBe(true);
    expect(sameCursor({ kind: 'last' }, { kind: 'last' })).toBe(true);
    expect(sameCursor({ kind: 'after', id: 1n }, { kind: 'after', id: 1n })).toBe(true);
    expect(sameCursor({ kind: 'after', id: 1n }, { kind: 'before', id: 1n })).toBe(false);
    expect(sameCursor({ kind: 'after', id: 1n }, undefined)).toBe(false);
  });
});
