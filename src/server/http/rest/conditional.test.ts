import type { IncomingMessage } from 'node:http';

import { describe, expect, it } from 'vitest';

import { entityTag, noneMatch } from './conditional';
import type { RestRoute } from './routing';

const route = { method: 'GET', template: '/plants' } as RestRoute;
const sent = (value?: string) => ({ headers: value === undefined ? {} : { 'if-none-match': value } }) as IncomingMessage;

describe('entity tags', () => {
  it('are strong, quoted, and change with the version, the scope and the input, never with the process', () => {
    const etag = entityTag(route, 'owner 2:7', { limit: '20' });
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(entityTag(route, 'owner 2:7', { limit: '20' })).toBe(etag);
    for (const other of [entityTag(route, 'owner 2:8', { limit: '20' }), entityTag(route, 'owner 3:7', { limit: '20' }), entityTag(route, 'all:7', { limit: '20' }), entityTag(route, 'owner 2:7', { limit: '21' }), entityTag(route, 'owner 2:7', {})]) {
      expect(other).not.toBe(etag);
    }
  });

  it('stay the same bytes across releases: the SHA-256 of the representation, operation, version and input', () => {
    // A client keeps its ETag across an upgrade of the server; changing how it is hashed would void them all.
    expect(entityTag(route, 'owner 2:7', { limit: '20' })).toBe('"zG9mayFIiu72ri5MWSdInsjqpnb"');
  });

  it('match If-None-Match by weak comparison, one of a list, and by * (RFC 9110, 13.1.2)', () => {
    const etag = entityTag(route, 'all:1', {});
    expect(noneMatch(sent(etag), etag)).toBe(true);
    expect(noneMatch(sent(`W/${etag}`), etag)).toBe(true);
    expect(noneMatch(sent(`"a", ${etag} ,"b"`), etag)).toBe(true);
    expect(noneMatch(sent(`"a",\t, W/${etag}`), etag)).toBe(true);
    // A comma is a character an opaque tag may hold: "a,b" is one tag, not two.
    expect(noneMatch(sent(`"a,b", ${etag}`), etag)).toBe(true);
    expect(noneMatch(sent('"a", "b"'), etag)).toBe(false);
    expect(noneMatch(sent(etag.slice(1, -1)), etag)).toBe(false);
    expect(noneMatch(sent(`w/${etag}`), etag)).toBe(false);
    expect(noneMatch(sent(''), etag)).toBe(false);
    expect(noneMatch(sent(), etag)).toBe(false);
    // "*": any current answer, alone or (as Go's net/http reads it) among tags.
    expect(noneMatch(sent('*'), etag)).toBe(true);
    expect(noneMatch(sent(' * '), etag)).toBe(true);
    expect(noneMatch(sent('"a", *'), etag)).toBe(true);
    // The list is read up to its first member that is neither: what follows it is not looked at.
    expect(noneMatch(sent(`"a" junk, ${etag}`), etag)).toBe(false);
    expect(noneMatch(sent(`"a, ${etag}`), etag)).toBe(false);
    expect(noneMatch(sent('**'), etag)).toBe(false);
  });
});
