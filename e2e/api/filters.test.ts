/**
 * The list's filters (document version 1.1.0): `tag`, `q` and `owner`, alone and together, with keyset
 * paging and the `Link` header carrying them, and what an attacker might send instead.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import type { ApiClient, ApiResponse } from '@test-support/http-client';
import { trpcCall, trpcData } from '@test-support/trpc-client';
import { errorCatalog } from '@/shared/errors';

const server = setupServer();
let alice: ApiClient;
let bob: ApiClient;
let aliceToken: string;

const ids = (response: ApiResponse): bigint[] => response.json.map((plant: { id: bigint }) => plant.id);

beforeAll(async () => {
  aliceToken = (await server.createToken('filter-alice', 'member')).token;
  alice = server.client(aliceToken);
  bob = server.client((await server.createToken('filter-bob', 'member')).token);
  const plants: [ApiClient, bigint, string, string?][] = [
    [alice, 1n, 'Straße fern', 'fern'],
    [alice, 2n, 'STRASSE palm', 'palm'],
    [alice, 3n, '100% cactus', 'cactus'],
    [alice, 4n, 'Maidenhair fern', 'fern'],
    [alice, 5n, 'abc_d', 'fern'],
    [alice, 6n, 'abcxd'],
    [bob, 7n, 'Bob fern', 'fern'],
    [bob, 8n, 'Bob palm', 'palm'],
  ];
  for (const [client, id, name, tag] of plants) expectStatus(await client.post('/api/plants', plantBody(id, name, tag)), 200);
});

describe('GET /api/plants?tag=&q=&owner=', () => {
  it('tag: only plants with exactly that tag (case matters, no partial match)', async () => {
    expect(ids(await alice.get('/api/plants?tag=fern'))).toEqual([1n, 4n, 5n]);
    expect(ids(await alice.get('/api/plants?tag=Fern'))).toEqual([]);
    expect(ids(await alice.get('/api/plants?tag=fer'))).toEqual([]);
  });

  it('q: name contains the text in any case, Unicode included, with % and _ as plain characters', async () => {
    expect(ids(await alice.get('/api/plants?q=FERN'))).toEqual([1n, 4n]);
    expect(ids(await alice.get(`/api/plants?q=${encodeURIComponent('strasse')}`))).toEqual([1n, 2n]);
    expect(ids(await alice.get(`/api/plants?q=${encodeURIComponent('straße')}`))).toEqual([1n, 2n]);
    expect(ids(await alice.get(`/api/plants?q=${encodeURIComponent('%')}`))).toEqual([3n]);
    expect(ids(await alice.get(`/api/plants?q=${encodeURIComponent('c_d')}`))).toEqual([5n]);
    expect(ids(await alice.get(`/api/plants?q=${encodeURIComponent("' OR 1=1 --")}`))).toEqual([]);
  });

  it('combines filters with each other and with the access rule', async () => {
    expect(ids(await alice.get('/api/plants?tag=fern&q=maiden'))).toEqual([4n]);
    expect(ids(await bob.get('/api/plants?tag=fern'))).toEqual([7n]);
    expect(ids(await server.admin.get('/api/plants?tag=palm'))).toEqual([2n, 8n]);
  });

  it('owner: admins only; a member sending it gets 400', async () => {
    expect(ids(await server.admin.get('/api/plants?owner=filter-bob'))).toEqual([7n, 8n]);
    expect(ids(await server.admin.get('/api/plants?owner=filter-bob&tag=palm'))).toEqual([8n]);
    expect(ids(await server.admin.get('/api/plants?owner=nobody'))).toEqual([]);
    expectError(await alice.get('/api/plants?owner=filter-alice'), 'ownerFilterForAdmins', 'owner');
    expectError(await alice.get('/api/plants?owner=filter-bob'), 'ownerFilterForAdmins', 'owner');
  });

  it('pages with limit/after and the Link header keeps the filters', async () => {
    const first = await alice.get('/api/plants?tag=fern&limit=2');
    expect(ids(first)).toEqual([1n, 4n]);
    const link = new URL(nextLink(first)!, first.request.url);
    expect(Object.fromEntries(link.searchParams)).toEqual({ limit: '2', tag: 'fern', after: '4' });
    const second = await alice.get(link.pathname + link.search);
    expect(ids(second)).toEqual([5n]);
    expect(second.headers.get('link')).toBeNull();

    const searched = await alice.get(`/api/plants?q=${encodeURIComponent('ß')}&limit=1`);
    const searchLink = new URL(nextLink(searched)!, searched.request.url);
    expect(searchLink.searchParams.get('q')).toBe('ß');
    expect(ids(await alice.get(searchLink.pathname + searchLink.search))).toEqual([2n]);
  });

  it('refuses filters that break their rules with 400 / 40007, naming the parameter', async () => {
    const cases: [string, string][] = [
      ['q=', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=%00', 'q'],
      ['q=a%0Ab', 'q'],
      ['tag=', 'tag'],
      [`tag=${'t'.repeat(101)}`, 'tag'],
      ['tag=%07', 'tag'],
      ['q=a&q=b', 'q'],
      [`owner=${'o'.repeat(65)}`, 'owner'],
    ];
    for (const [query, name] of cases) {
      const response = await server.admin.get(`/api/plants?${query}`);
      expectError(response, 'invalidQueryParameter', name);
    }
  });

  it('takes a huge query string without trouble (431 past the header limit, never a 5xx)', async () => {
    const response = await server.rawClient(aliceToken).get(`/api/plants?q=${'x'.repeat(20_000)}`);
    expect([400, 414, 431]).toContain(response.status);
  });

  it('filters the same on the tRPC door', async () => {
    const response = await trpcCall(server.baseUrl, 'query', 'plants.list', { token: aliceToken, input: { q: 'strasse', tag: 'palm' } });
    expect(response.status).toBe(200);
    expect(trpcData<{ id: bigint }[]>(response).map((plant) => plant.id)).toEqual([2n]);
    const refused = await trpcCall(server.baseUrl, 'query', 'plants.list', { token: aliceToken, input: { owner: 'filter-bob' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.json.data.error).toBe(errorCatalog.ownerFilterForAdmins.value);
  });
});
