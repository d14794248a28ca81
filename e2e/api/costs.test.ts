/**
 * A call is charged what it does (issue 18): the per-token bucket is charged one per call at the door (a
 * tRPC batch its calls), and the rest once the input is read: a bulk delete one per id, a name search
 * SEARCH_COST. Both doors share the charge, and its 429 carries Retry-After in each door's format. Runs on
 * both engines.
 */
import { describe, expect, it } from 'vitest';

import { BULK_DELETE_MAX } from '@/shared/plants';
import { SEARCH_COST } from '@/shared/limits';

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

describe(`a name search costs ${SEARCH_COST}`, () => {
  const searches = BURST / SEARCH_COST;

  it(`on REST: ${searches} searches spend a burst of ${BURST}, the next is a 429 with Retry-After`, async () => {
    const { token } = await server.createToken('cost-search-rest');
    const client = server.client(token);
    for (let search = 0; search < searches; search++) expectStatus(await client.get('/api/plants?q=fern&limit=5'), 200);
    const refused = await client.get('/api/plants?q=fern&limit=5');
    expectError(refused, 429, 42900);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it(`on tRPC, the admin page's table too: ${searches} searched pages spend the burst`, async () => {
    const { token } = await server.createToken('cost-search-trpc');
    const input = `input=${encodeURIComponent(JSON.stringify({ json: { size: 10, q: 'fern' } }))}`;
    for (let search = 0; search < searches; search++) expect((await trpcRequest(server.baseUrl, 'plants.page', { token, query: input })).status).toBe(200);
    const refused = await trpcRequest(server.baseUrl, 'plants.page', { token, query: input });
    await expectTrpcError(refused, 429, 42900);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('leaves a list without a search at one', async () => {
    const { token } = await server.createToken('cost-plain');
    const input = `input=${encodeURIComponent(JSON.stringify({ json: { size: 10 } }))}`;
    for (let call = 0; call < searches + 5; call++) {
      expectStatus(await server.client(token).get('/api/plants?limit=5'), 200);
      expect((await trpcRequest(server.baseUrl, 'plants.page', { token, query: input })).status).toBe(200);
    }
  });
});
