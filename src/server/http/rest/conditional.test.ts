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

  it('match If-None-Match by weak comparison, one of a list, and never by *', () => {
    const etag = entityTag(route, 'all:1', {});
    expect(noneMatch(sent(etag), etag)).toBe(true);
    expect(noneMatch(sent(`W/${etag}`), etag)).toBe(true);
    expect(noneMatch(sent(`"a", ${etag} ,"b"`), etag)).toBe(true);
    expect(noneMatch(sent('"a", "b"'), etag)).toBe(false);
    expect(noneMatch(sent(etag.slice(1, -1)), etag)).toBe(false);
    expect(noneMatch(sent('*'), etag)).toBe(false);
    expect(noneMatch(sent(), etag)).toBe(false);
  });
});
