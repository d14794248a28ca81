/**
 * A call is charged what it does (issue 18): the per-token bucket is charged one per call at the door (a
 * tRPC batch its calls), and the rest once the input is read: a bulk delete one per id, a list one per 100
 * rows, a table page its counts, a name search SEARCH_COST more. Both doors share the charge, and its 429
 * carries Retry-After in each door's format. Runs on both engines.
 */
import { describe, expect, it } from 'vitest';

import { BULK_DELETE_MAX } from '@/shared/plants';
import { ROWS_PER_UNIT, SEARCH_COST, TABLE_PAGE_COST } from '@/shared/limits';

import { expectError, expectStatus, setupServer } from './helpers/fixture';
import { expectTrpcError, trpcBatch, trpcErrors, trpcRequest } from './helpers/trpc';

// Refills so slow that a busy machine cannot refill a bucket between the calls that spend it.
const BURST = 150;
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });

const bulkDelete = (first: number) => ({ json: { ids: Array.from({ length: BULK_DELETE_MAX }, (_, index) => String(first + index)) }, meta: { values: Object.fromEntries(Array.from({ length: BULK_DELETE_MAX }, (_, index) => [`ids.${index}`, ['bigint']])) } });

describe('a bulk delete', () => {
  it(`costs its ids: one of ${BULK_DELETE_MAX} ids leaves ${BURST - BULK_DELETE_MAX} of a burst of ${BURST}, and the next is a 429 with Retry-After`, async () => {
    const { token } = await server.createToken('cost-bulk');
    const first = await trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [bulkDelete(900_000)]);
    expect(first.status).toBe(200);
    const second = await trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [bulkDelete(900_100)]);
    await expectTrpcError(second, 429, 42900, 'too many requests for this token');
    expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(second.headers.get('ratelimit-limit')).toBe(String(BURST));
    // What is left is still there for ordinary calls: the refused charge took nothing.
    for (let call = 0; call < BURST - BULK_DELETE_MAX - 2; call++) expectStatus(await server.client(token).get('/api/plants?limit=1'), 200);
  });

  it('charges each call of a batch: two bulk deletes in one batch get one result and one 429', async () => {
    const { token } = await server.createToken('cost-batch');
    const answer = await trpcBatch(server.baseUrl, token, ['plants.deleteMany', 'plants.deleteMany'], [bulkDelete(910_000), bulkDelete(910_100)]);
    const errors = await trpcErrors(answer);
    expect(errors[0]).toBeUndefined();
    expect(errors[1]?.data.error).toBe(42900);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('reads cost their rows, their counts and their search', () => {
  const listed = (limit: number, q?: string) => Math.ceil(limit / ROWS_PER_UNIT) + (q === undefined ? 0 : SEARCH_COST);
  const paged = (q?: string) => TABLE_PAGE_COST + (q === undefined ? 0 : SEARCH_COST);

  /** Spends a fresh token's burst with `call`, which costs `cost`; the call after the last one that fits is a 429. */
  async function spend(user: string, cost: number, call: (token: string) => Promise<number>): Promise<{ passed: number; refused: number }> {
    const { token } = await server.createToken(user);
    const fits = Math.floor(BURST / cost);
    let passed = 0;
    for (let index = 0; index < fits; index++) if ((await call(token)) === 200) passed++;
    return { passed, refused: await call(token) };
  }

  it(`on REST: a search costs ${SEARCH_COST} more, and a list of 1000 costs ${1000 / ROWS_PER_UNIT}`, async () => {
    const search = (token: string) => server.client(token).get('/api/plants?q=fern&limit=5').then((response) => response.status);
    expect(await spend('cost-search-rest', listed(5, 'fern'), search)).toEqual({ passed: Math.floor(BURST / listed(5, 'fern')), refused: 429 });
    const long = (token: string) => server.client(token).get('/api/plants?limit=1000').then((response) => response.status);
    expect(await spend('cost-long-rest', listed(1000), long)).toEqual({ passed: Math.floor(BURST / listed(1000)), refused: 429 });
    const { token } = await server.createToken('cost-refused-rest');
    for (let index = 0; index < Math.floor(BURST / listed(1000)); index++) await server.client(token).get('/api/plants?limit=1000');
    const refused = await server.client(token).get('/api/plants?limit=1000');
    expectError(refused, 429, 42900);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it(`on tRPC, the admin page's table: a page costs ${TABLE_PAGE_COST}, a searched one ${paged('fern')}, a list its rows`, async () => {
    const page = (q?: string) => (token: string) =>
      trpcRequest(server.baseUrl, 'plants.page', { token, query: `input=${encodeURIComponent(JSON.stringify({ json: { size: 10, ...(q === undefined ? {} : { q }) } }))}` }).then((response) => response.status);
    expect(await spend('cost-page', paged(), page())).toEqual({ passed: Math.floor(BURST / paged()), refused: 429 });
    expect(await spend('cost-page-search', paged('fern'), page('fern'))).toEqual({ passed: Math.floor(BURST / paged('fern')), refused: 429 });
    const list = (token: string) => trpcRequest(server.baseUrl, 'plants.list', { token, query: `input=${encodeURIComponent(JSON.stringify({ json: { limit: 1000 } }))}` }).then((response) => response.status);
    expect(await spend('cost-list-trpc', listed(1000), list)).toEqual({ passed: Math.floor(BURST / listed(1000)), refused: 429 });
    const { token } = await server.createToken('cost-refused-trpc');
    for (let index = 0; index < Math.floor(BURST / paged('fern')); index++) await page('fern')(token);
    const refused = await trpcRequest(server.baseUrl, 'plants.page', { token, query: `input=${encodeURIComponent(JSON.stringify({ json: { size: 10, q: 'fern' } }))}` });
    await expectTrpcError(refused, 429, 42900);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('leaves a list of up to 100 rows without a search at one', async () => {
    const { token } = await server.createToken('cost-plain');
    for (let call = 0; call < BURST; call++) expectStatus(await server.client(token).get(`/api/plants?limit=${call % 2 === 0 ? 100 : 1}`), 200);
    expectError(await server.client(token).get('/api/plants?limit=1'), 429, 42900);
  });
});
