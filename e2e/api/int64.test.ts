/**
 * Ids are int64 and kept exact end to end: never rounded through a JS double (2^53 + 1 must stay itself).
 * The lossless parser in the helpers turns every integer into a bigint, so equality here is exact.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, nextLink, plantBody, setupServer } from '@test-support/api-fixture';

const server = setupServer();

const TWO_53 = 9007199254740992n; // 2^53: the doubles around it are 2 apart
const BEYOND_DOUBLE = TWO_53 + 1n; // 9007199254740993
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

async function list(query: string) {
  const response = await server.admin.get(`/api/plants${query}`);
  expectStatus(response, 200);
  return response;
}

const ids = (response: { json: { id: bigint }[] }) => response.json.map((plant) => plant.id);

describe('int64 ids round-trip exactly', () => {
  beforeAll(async () => {
    // Neighbours that a rounding implementation would confuse with 2^53 + 1.
    for (const id of [TWO_53, TWO_53 + 2n]) expectStatus(await server.admin.post('/api/plants', plantBody(id, `n${id}`)), 200);
  });

  it.each([
    ['9007199254740993 (2^53 + 1)', BEYOND_DOUBLE],
    ['9223372036854775807 (int64 max)', INT64_MAX],
    ['-9223372036854775808 (int64 min)', INT64_MIN],
  ])('create answers with the id %s exactly, digit for digit', async (_, id) => {
    const response = await server.admin.post('/api/plants', plantBody(id, `plant ${id}`));
    expectStatus(response, 200);
    expect(response.json.id).toBe(id);
    expect(response.text).toMatch(new RegExp(`"id"\\s*:\\s*${id}[,}\\s]`));
  });

  it('does not take 2^53 + 1 for its neighbour 2^53: both exist as distinct plants', async () => {
    const listed = ids(await list('?limit=1000'));
    expect(listed).toContain(TWO_53);
    expect(listed).toContain(BEYOND_DOUBLE);
    expect(listed).toContain(TWO_53 + 2n);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('lists every int64 id exactly and in numeric order (min first, max last)', async () => {
    const response = await list('?limit=1000');
    expect(ids(response)).toEqual([INT64_MIN, TWO_53, BEYOND_DOUBLE, TWO_53 + 2n, INT64_MAX]);
    for (const id of [INT64_MIN, BEYOND_DOUBLE, INT64_MAX]) expect(response.text).toMatch(new RegExp(`"id"\\s*:\\s*${id}[,}\\s]`));
  });

  it('after=2^53 returns 2^53 + 1 next (after is not rounded)', async () => {
    expect(ids(await list(`?limit=1&after=${TWO_53}`))).toEqual([BEYOND_DOUBLE]);
  });

  it('after=2^53 + 1 skips exactly that plant and returns 2^53 + 2', async () => {
    expect(ids(await list(`?limit=1&after=${BEYOND_DOUBLE}`))).toEqual([TWO_53 + 2n]);
  });

  it('after=int64 min returns everything but the int64 min plant', async () => {
    expect(ids(await list(`?after=${INT64_MIN}`))).toEqual([TWO_53, BEYOND_DOUBLE, TWO_53 + 2n, INT64_MAX]);
  });

  it('after=int64 max returns an empty page without a next link', async () => {
    const response = await list(`?after=${INT64_MAX}`);
    expect(response.json).toEqual([]);
    expect(nextLink(response)).toBeUndefined();
  });

  it('puts the exact last id into the next link (after=2^53 + 1)', async () => {
    const response = await list(`?limit=1&after=${TWO_53}`);
    const link = nextLink(response);
    expect(link, 'a next link').toBeDefined();
    expect(new URL(link!, response.request.url).searchParams.get('after')).toBe(String(BEYOND_DOUBLE));
  });

  it('puts int64 min into the next link exactly', async () => {
    const link = nextLink(await list('?limit=1'));
    expect(link, 'a next link').toBeDefined();
    expect(new URL(link!, server.baseUrl).searchParams.get('after')).toBe(String(INT64_MIN));
  });

  it('rejects a second create of 2^53 + 1 as a duplicate of itself, naming the exact id', async () => {
    expectError(
      await server.admin.post('/api/plants', plantBody(BEYOND_DOUBLE, 'again')), 'plantIdTaken',
      `a plant with id ${BEYOND_DOUBLE} already exists`,
    );
  });
});

describe('int64 ids in the delete path', () => {
  it.each([
    ['9007199254740993 (2^53 + 1)', BEYOND_DOUBLE],
    ['9223372036854775807 (int64 max)', INT64_MAX],
    ['-9223372036854775808 (int64 min)', INT64_MIN],
  ])('DELETE /api/plants/%s deletes exactly that plant', async (_, id) => {
    const before = ids(await list('?limit=1000'));
    expect(before).toContain(id);
    const response = await server.admin.delete(`/api/plants/${id}`);
    expectStatus(response, 204);
    expect(ids(await list('?limit=1000'))).toEqual(before.filter((other) => other !== id));
  });

  it('left the neighbours 2^53 and 2^53 + 2 in place', async () => {
    expect(ids(await list('?limit=1000'))).toEqual([TWO_53, TWO_53 + 2n]);
  });

  it('answers 404 for 2^53 + 1 now, although its neighbours exist', async () => {
    expectError(await server.admin.delete(`/api/plants/${BEYOND_DOUBLE}`), 'plantNotFound');
  });
});
