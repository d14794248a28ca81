/**
 * Deeply nested JSON, on every door that reads JSON: every reader behind the doors recurses over
 * nesting, and superjson's walker costs the square of the depth (unchecked, a 5 KB tRPC query 2,400 levels deep
 * takes ~0.3 s of CPU, a batch of ten creates 2 s). Both doors scan the text for its depth before anything parses
 * it: deeper than JSON_MAX_DEPTH (32) is 400 / 40022, in each door's format. Runs on both engines.
 */
import { describe, expect, it } from 'vitest';

import { JSON_MAX_DEPTH } from '@/shared/limits';

import { expectError, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { expectTrpcError, trpcBatch, trpcErrors, trpcRequest } from '@test-support/trpc-client';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
const nextId = idSource(180_000n);

const arrays = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** The costliest depths unchecked: 2,400 levels (REST and the batch) and 4,000 (REST with an Idempotency-Key). */
const DEEP = 2_400;

describe('REST bodies', () => {
  it(`refuse more than ${JSON_MAX_DEPTH} levels of arrays or objects with 400 / 40022, on every operation that reads a body`, async () => {
    const client = server.client(server.adminToken);
    const id = nextId();
    for (const value of [arrays(DEEP), objects(1_000), arrays(JSON_MAX_DEPTH), arrays(32_000)]) {
      const body = `{"id":${id},"name":"Deep","tag":${value}}`;
      expectError(await client.post('/api/plants', body), 'jsonTooDeep', `more than ${JSON_MAX_DEPTH} levels deep`);
    }
    expectStatus(await client.post('/api/plants', plantBody(id, 'Shallow')), 200);
    const patch = await client.request('PATCH', `/api/plants/${id}`, { body: `{"tag":${arrays(DEEP)}}`, contentType: 'application/merge-patch+json' });
    expectError(patch, 'jsonTooDeep');
    const endpoint = await client.post('/api/webhooks/endpoints', `{"url":"https://example.com/hook","events":${arrays(DEEP, '"plant.created"')}}`);
    expectError(endpoint, 'jsonTooDeep');
  });

  it(`take ${JSON_MAX_DEPTH} levels: the bound refuses nesting, not JSON (the tag is then simply not a string)`, async () => {
    const body = `{"id":${nextId()},"name":"Deep","tag":${arrays(JSON_MAX_DEPTH - 1)}}`;
    expectError(await server.client(server.adminToken).post('/api/plants', body), 'wrongType', 'tag');
  });

  it('refuse a create with an Idempotency-Key and a tag 4,000 deep with 400 (it was a 500), and keep nothing for the key', async () => {
    const key = `deep-${Date.now()}`;
    const body = `{"id":${nextId()},"name":"Deep","tag":${arrays(4_000)}}`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await server.client(server.adminToken).post('/api/plants', body, { headers: { 'Idempotency-Key': key } });
      expectError(response, 'jsonTooDeep');
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    const kept = await server.database.query<{ count: bigint }>('SELECT COUNT(*) AS count FROM "IdempotencyKey" WHERE "key" = ?', [key]);
    expect(kept[0]!.count).toBe(0n);
    expect(server.log()).not.toMatch(/"status":5\d\d/);
  });
});

describe('tRPC inputs', () => {
  it('refuse a query input nested 2,400 deep (a 5 KB GET) with 400 / 40022 in tRPC’s format', async () => {
    const input = `{"json":{"q":${arrays(DEEP)}}}`;
    expect(input.length).toBeLessThan(5_000);
    const response = await trpcRequest(server.baseUrl, 'plants.list', { token: server.adminToken, query: `input=${encodeURIComponent(input)}` });
    await expectTrpcError(response, 'jsonTooDeep', 'the input nests');
    const inMeta = `{"json":{"q":"x"},"meta":{"values":${objects(400)}}}`;
    await expectTrpcError(await trpcRequest(server.baseUrl, 'plants.list', { token: server.adminToken, query: `input=${encodeURIComponent(inMeta)}` }), 'jsonTooDeep');
  });

  it('refuse a batch of ten creates whose tags nest 2,400 deep (47 KiB) with one 400 / 40022, before any call runs', async () => {
    const ids = Array.from({ length: 10 }, () => nextId());
    const inputs = ids.map((id) => ({ json: { id: String(id), name: 'Deep', tag: '§' }, meta: { values: { id: ['bigint'] } } }));
    const body = JSON.stringify(Object.fromEntries(inputs.map((input, index) => [index, input]))).replaceAll('"§"', arrays(DEEP));
    expect(body.length).toBeGreaterThan(47 * 1024);
    const response = await trpcRequest(server.baseUrl, Array(10).fill('plants.create').join(','), { token: server.adminToken, query: 'batch=1', body });
    await expectTrpcError(response, 'jsonTooDeep', 'the body nests');
    const created = await server.database.query<{ count: bigint }>(`SELECT COUNT(*) AS count FROM "Plant" WHERE "id" IN (${ids.join(',')})`);
    expect(created[0]!.count).toBe(0n);
  });

  it('still take what the admin page sends: a batch of pages with cursors and tagged ids, and a bulk delete', async () => {
    const id = nextId();
    expectStatus(await server.client(server.adminToken).post('/api/plants', plantBody(id, 'Kept')), 200);
    const page = { json: { size: 10, cursor: { kind: 'before', id: String(id + 1n) }, q: 'Kept' }, meta: { values: { 'cursor.id': ['bigint'] } } };
    const pages = await trpcBatch(server.baseUrl, server.adminToken, ['plants.page', 'plants.page'], [page, { json: { size: 25 } }], 'GET');
    expect(pages.status).toBe(200);
    expect(await trpcErrors(pages)).toEqual([undefined, undefined]);
    const deleted = await trpcBatch(server.baseUrl, server.adminToken, ['plants.deleteMany'], [{ json: { selection: { kind: 'ids', ids: [String(id)] } }, meta: { values: { 'selection.ids.0': ['bigint'] } } }]);
    expect(deleted.status).toBe(200);
  });
});
