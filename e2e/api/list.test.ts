import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectJsonContentType, expectStatus, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import type { ApiClient, ApiResponse } from '@test-support/http-client';

const server = setupServer();

/** 150 plants with scattered ids (negative ones too), created in a shuffled order. */
const PLANT_COUNT = 150;
const allIds = Array.from({ length: PLANT_COUNT }, (_, index) => BigInt(index * 37 - 2_000));
const sortedIds = [...allIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  // A fixed permutation: deterministic, but far from sorted.
  for (let index = copy.length - 1; index > 0; index--) {
    const other = (index * 7919) % (index + 1);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}

const ids = (response: ApiResponse): bigint[] => response.json.map((plant: { id: bigint }) => plant.id);

beforeAll(async () => {
  const order = shuffled(allIds);
  for (let start = 0; start < order.length; start += 10) {
    const batch = order.slice(start, start + 10);
    const responses = await Promise.all(batch.map((id) => server.admin.post('/api/plants', plantBody(id, `plant ${id}`, id % 2n === 0n ? 'even' : undefined))));
    for (const response of responses) expectStatus(response, 200);
  }
});

/** Follows `Link: rel="next"` from `first` until there is none; returns every page. */
async function followPages(client: ApiClient, first: string, maxPages = 200): Promise<ApiResponse[]> {
  const pages: ApiResponse[] = [];
  let target: string | undefined = first;
  while (target !== undefined) {
    const response = await client.get(target);
    expectStatus(response, 200);
    pages.push(response);
    const link = nextLink(response);
    target = link === undefined ? undefined : new URL(link, response.request.url).href;
    expect(pages.length, 'the next links never end').toBeLessThanOrEqual(maxPages);
  }
  return pages;
}

describe('GET /api/plants: the page', () => {
  it('answers 200 with a JSON array of plants', async () => {
    const response = await server.admin.get('/api/plants');
    expectStatus(response, 200);
    expectJsonContentType(response);
    expect(Array.isArray(response.json)).toBe(true);
  });

  it('returns 100 plants by default: the 100 smallest ids, ascending', async () => {
    const response = await server.admin.get('/api/plants');
    expect(ids(response)).toEqual(sortedIds.slice(0, 100));
  });

  it('returns plants as {id, name, tag}, tag only when the plant has one', async () => {
    const response = await server.admin.get('/api/plants?limit=4');
    for (const plant of response.json) {
      const even = plant.id % 2n === 0n;
      expect(plant).toEqual(even ? { id: plant.id, name: `plant ${plant.id}`, tag: 'even' } : { id: plant.id, name: `plant ${plant.id}` });
    }
  });

  it('accepts limit=1 and returns the single smallest id', async () => {
    const response = await server.admin.get('/api/plants?limit=1');
    expectStatus(response, 200);
    expect(ids(response)).toEqual([sortedIds[0]]);
  });

  it('accepts limit=1000 and returns every plant, ascending, without a next link', async () => {
    const response = await server.admin.get('/api/plants?limit=1000');
    expectStatus(response, 200);
    expect(ids(response)).toEqual(sortedIds);
    expect(nextLink(response)).toBeUndefined();
    expect(response.headers.get('link')).toBeNull();
  });

  it('returns only ids greater than after, ascending', async () => {
    const after = sortedIds[41]!;
    const response = await server.admin.get(`/api/plants?limit=5&after=${after}`);
    expectStatus(response, 200);
    expect(ids(response)).toEqual(sortedIds.slice(42, 47));
  });

  it('accepts an after that is not an existing id', async () => {
    const after = sortedIds[10]! + 1n;
    const response = await server.admin.get(`/api/plants?limit=2&after=${after}`);
    expectStatus(response, 200);
    expect(ids(response)).toEqual(sortedIds.slice(11, 13));
  });

  it('accepts a negative after', async () => {
    const response = await server.admin.get('/api/plants?limit=3&after=-1');
    expectStatus(response, 200);
    expect(ids(response)).toEqual(sortedIds.filter((id) => id > -1n).slice(0, 3));
  });
});

describe('GET /api/plants: invalid query parameters (40007)', () => {
  it.each(['0', '-1', 'abc', '1.5', '1001', '', '1e2', '99999999999', '2147483648'])('rejects limit=%s with 400, error 40007 naming limit', async (limit) => {
    expectError(await server.admin.get(`/api/plants?limit=${encodeURIComponent(limit)}`), 'invalidQueryParameter', 'limit');
  });

  it.each(['abc', '1.5', '', '9223372036854775808', '-9223372036854775809', '1e3'])('rejects after=%s with 400, error 40007 naming after', async (after) => {
    expectError(await server.admin.get(`/api/plants?after=${encodeURIComponent(after)}`), 'invalidQueryParameter', 'after');
  });
});

describe('GET /api/plants: paging with Link: rel="next"', () => {
  it('sends a next link while more plants follow, as <…/api/plants?limit=N&after=LASTID>; rel="next"', async () => {
    const response = await server.admin.get('/api/plants?limit=10');
    expect(response.headers.get('link')).toMatch(/^<[^>]*\/api\/plants\?[^>]*>;\s*rel="next"$/);
    const link = new URL(nextLink(response)!, response.request.url);
    expect(link.pathname).toBe('/api/plants');
    expect(link.searchParams.get('limit')).toBe('10');
    expect(link.searchParams.get('after')).toBe(String(sortedIds[9]));
  });

  it('puts the default limit into the next link when the request had none', async () => {
    const link = new URL(nextLink(await server.admin.get('/api/plants'))!, server.baseUrl);
    expect(link.searchParams.get('limit')).toBe('100');
    expect(link.searchParams.get('after')).toBe(String(sortedIds[99]));
  });

  it('points the next link at the origin the client called (it works from where the client is)', async () => {
    const response = await server.admin.get('/api/plants?limit=10');
    const link = new URL(nextLink(response)!, response.request.url);
    expect(link.origin).toBe(new URL(server.baseUrl).origin);
  });

  it('collects every plant exactly once, in order, following next links with limit=7', async () => {
    const pages = await followPages(server.admin, '/api/plants?limit=7');
    expect(pages).toHaveLength(Math.ceil(PLANT_COUNT / 7));
    for (const page of pages.slice(0, -1)) expect(page.json).toHaveLength(7);
    expect(pages.flatMap(ids)).toEqual(sortedIds);
  });

  it('collects every plant exactly once following next links from the default page', async () => {
    const pages = await followPages(server.admin, '/api/plants');
    expect(pages.map((page) => page.json.length)).toEqual([100, 50]);
    expect(pages.flatMap(ids)).toEqual(sortedIds);
  });

  it('sends no next link on the last page when it is exactly full (4 plants, limit 2)', async () => {
    const member = await server.createToken('exactly-four', 'member');
    const client = server.client(member.token);
    for (const id of [900_001n, 900_002n, 900_003n, 900_004n]) expectStatus(await client.post('/api/plants', plantBody(id, 'four')), 200);
    const pages = await followPages(client, '/api/plants?limit=2');
    expect(pages.map(ids)).toEqual([
      [900_001n, 900_002n],
      [900_003n, 900_004n],
    ]);
    expect(nextLink(pages[0]!)).toBeDefined();
    expect(pages[1]!.headers.get('link')).toBeNull();
  });

  it('answers an empty array without a next link to a caller with no plants', async () => {
    const member = await server.createToken('no-plants', 'member');
    const response = await server.client(member.token).get('/api/plants');
    expectStatus(response, 200);
    expect(response.json).toEqual([]);
    expect(response.text.trim()).toBe('[]');
    expect(response.headers.get('link')).toBeNull();
  });
});
