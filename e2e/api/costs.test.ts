/**
 * A call is charged what it does: the per-token bucket is charged one per call at the door (a
 * tRPC batch its calls), and the rest once the input is read: a bulk delete one per id, a list one per 100
 * rows, a table page its counts, a name search SEARCH_COST more. Both doors share the charge, and its 429
 * carries Retry-After in each door's format. Runs on both engines.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { BODY_BYTES_PER_UNIT, BODY_LIMIT_BYTES, BULK_ROWS_PER_UNIT, kib, MCP_REQUEST_UNITS, ROWS_PER_UNIT, SEARCH_COST, TABLE_PAGE_COST } from '@/shared/limits';

import { expectError, setupServer } from '@test-support/api-fixture';
import { postMcp, rpcText } from '@test-support/mcp-client';
import { expectTrpcError, trpcBatch, trpcErrors, trpcRequest } from '@test-support/trpc-client';
import { errorCatalog } from '@/shared/errors';

// A small burst, so spending it takes a few calls; refills so slow that a busy machine cannot refill a
// bucket between the calls that spend it.
const BURST = 60;
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });

/** One fresh token per use, made at once (each is a run of the token command). */
const USES = ['bulk', 'bulk-search', 'batch', 'search-rest', 'long-rest', 'page', 'page-search', 'long-trpc', 'long-mcp', 'plain', 'body-rest', 'body-trpc'] as const;
const tokens = {} as Record<(typeof USES)[number], string>;
beforeAll(async () => {
  const issued = await Promise.all(USES.map((use) => server.createToken(`cost-${use}`)));
  USES.forEach((use, index) => (tokens[use] = issued[index]!.token));
});

const bulkDelete = (first: number, count: number) => ({
  json: { selection: { kind: 'ids', ids: Array.from({ length: count }, (_, index) => String(first + index)) } },
  meta: { values: Object.fromEntries(Array.from({ length: count }, (_, index) => [`selection.ids.${index}`, ['bigint']])) },
});

describe('a bulk delete', () => {
  /** The plants a bulk delete of `units` units removes (BULK_ROWS_PER_UNIT plants a unit). */
  const plantsFor = (units: number) => units * BULK_ROWS_PER_UNIT;

  it(`costs its plants: one of ${plantsFor(40)} ids leaves ${BURST - 40} of a burst of ${BURST}, and the next is a 429 with Retry-After`, async () => {
    const token = tokens.bulk;
    expect((await trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [bulkDelete(900_000, plantsFor(40))])).status).toBe(200);
    const second = await trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [bulkDelete(901_000, plantsFor(40))]);
    await expectTrpcError(second, 'tooManyRequests', 'too many requests for this token');
    expect(second.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(second.headers.get('ratelimit-limit')).toBe(String(BURST));
    // The refused charge took only the door's unit: what is left is still there, to the unit.
    expect((await trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [bulkDelete(902_000, plantsFor(BURST - 40 - 1))])).status).toBe(200);
    expectError(await server.client(token).get('/api/plants?limit=1'), 'tooManyRequests');
  });

  it(`costs ${SEARCH_COST} more when it selects by a name search, found or not: each call walks names`, async () => {
    // Every plant matching a name nothing has: the call finds none, and still read names to learn it.
    const matching = { json: { selection: { kind: 'matching', filters: { q: 'no plant is named this' }, asOf: new Date().toISOString() } }, meta: { values: { 'selection.asOf': ['Date'] } } };
    const call = () => trpcBatch(server.baseUrl, tokens['bulk-search'], ['plants.deleteMany'], [matching]);
    const passed: number[] = [];
    for (let index = 0; index < Math.floor(BURST / (1 + SEARCH_COST)); index++) passed.push((await call()).status);
    expect(passed.every((status) => status === 200), passed.join(' ')).toBe(true);
    await expectTrpcError(await call(), 'tooManyRequests', 'too many requests for this token');
  });

  it('charges each call of a batch: two bulk deletes in one batch get one result and one 429', async () => {
    const answer = await trpcBatch(server.baseUrl, tokens.batch, ['plants.deleteMany', 'plants.deleteMany'], [bulkDelete(910_000, plantsFor(40)), bulkDelete(911_000, plantsFor(40))]);
    const errors = await trpcErrors(answer);
    expect(errors[0]).toBeUndefined();
    expect(errors[1]?.data.error).toBe(errorCatalog.tooManyRequests.value);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('reads cost their rows, their counts and their search', () => {
  const listed = (limit: number, q?: string) => Math.ceil(limit / ROWS_PER_UNIT) + (q === undefined ? 0 : SEARCH_COST);
  /** A table page of 10 rows: its counts, its rows (one unit per ROWS_PER_UNIT), and a search's more. */
  const paged = (q?: string) => TABLE_PAGE_COST + 1 + (q === undefined ? 0 : SEARCH_COST);

  /** Spends a token's burst with `call`, which costs `cost`: the calls that fit pass, the next is refused. */
  async function spend<Answer extends { status: number }>(token: string, cost: number, call: (token: string) => Promise<Answer>): Promise<Answer> {
    const statuses: number[] = [];
    for (let index = 0; index < Math.floor(BURST / cost); index++) statuses.push((await call(token)).status);
    expect(statuses.every((status) => status === 200), statuses.join(' ')).toBe(true);
    return call(token);
  }
  const page = (q?: string) => (token: string) =>
    trpcRequest(server.baseUrl, 'plants.page', { token, query: `input=${encodeURIComponent(JSON.stringify({ json: { size: 10, ...(q === undefined ? {} : { q }) } }))}` });

  it(`on REST: a search costs ${SEARCH_COST} more, and a list of 1000 costs ${1000 / ROWS_PER_UNIT}`, async () => {
    const searched = await spend(tokens['search-rest'], listed(5, 'fern'), (token) => server.client(token).get('/api/plants?q=fern&limit=5'));
    expect(searched.status).toBe(429);
    const refused = await spend(tokens['long-rest'], listed(1000), (token) => server.client(token).get('/api/plants?limit=1000'));
    expectError(refused, 'tooManyRequests');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it(`on tRPC, the admin page's table: a page of 10 costs ${paged()}, a searched one ${paged('fern')}, a list its rows`, async () => {
    expect((await spend(tokens.page, paged(), page())).status).toBe(429);
    const refused = await spend(tokens['page-search'], paged('fern'), page('fern'));
    await expectTrpcError(refused, 'tooManyRequests');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    const list = (token: string) => trpcRequest(server.baseUrl, 'plants.list', { token, query: `input=${encodeURIComponent(JSON.stringify({ json: { limit: 1000 } }))}` });
    expect((await spend(tokens['long-trpc'], listed(1000), list)).status).toBe(429);
  });

  it(`on MCP: a tool call is charged what the same call costs on the other doors, and the door's ${MCP_REQUEST_UNITS} units where they charge one`, async () => {
    const list = (token: string) => postMcp(server.baseUrl, token, rpcText('tools/call', { name: 'plants_list', arguments: { limit: 1000, q: 'fern' } }));
    const refused = await spend(tokens['long-mcp'], listed(1000, 'fern') + MCP_REQUEST_UNITS - 1, async (token) => {
      const answer = await list(token);
      // A tool's refusal is a result, not an HTTP status: the 200 that carries it says 42900 inside.
      return { status: answer.json?.result?.isError ? 429 : answer.status, text: answer.text };
    });
    expect(refused.text).toContain('42900');
  });

  it('leaves a list of up to 100 rows without a search at one', async () => {
    const refused = await spend(tokens.plain, 1, (token) => server.client(token).get('/api/plants?limit=100'));
    expectError(refused, 'tooManyRequests');
  });
});

describe(`a body costs one unit per ${kib(BODY_BYTES_PER_UNIT)}`, () => {
  /** A create body of about `size` bytes whose unknown fields make it a 400: reading and parsing it is the whole cost. */
  function unknownFields(id: string, size: number): string {
    let body = `{"id":${id},"name":"x"`;
    for (let field = 0; body.length < size - 16; field++) body += `,"f${field}":0`;
    return `${body}}`;
  }

  it(`on REST: a ${kib(BODY_LIMIT_BYTES)} body is charged ${BODY_LIMIT_BYTES / BODY_BYTES_PER_UNIT} units, before it is parsed`, async () => {
    const body = unknownFields('7', BODY_LIMIT_BYTES);
    const cost = Math.ceil(Buffer.byteLength(body) / BODY_BYTES_PER_UNIT);
    expect(cost).toBe(BODY_LIMIT_BYTES / BODY_BYTES_PER_UNIT);
    for (let index = 0; index < Math.floor(BURST / cost); index++) expectError(await server.client(tokens['body-rest']).post('/api/plants', body), 'unknownField');
    const refused = await server.client(tokens['body-rest']).post('/api/plants', body);
    expectError(refused, 'tooManyRequests');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('on tRPC: the body of a call or a batch is charged the same way, on top of its calls', async () => {
    const body = `{"json":${unknownFields('"7"', BODY_LIMIT_BYTES - 100)},"meta":{"values":{"id":["bigint"]}}}`;
    const cost = Math.ceil(Buffer.byteLength(body) / BODY_BYTES_PER_UNIT);
    const statuses: number[] = [];
    for (let index = 0; index < Math.floor(BURST / cost); index++) statuses.push((await trpcRequest(server.baseUrl, 'plants.create', { token: tokens['body-trpc'], body })).status);
    expect(statuses).toEqual(Array(Math.floor(BURST / cost)).fill(400));
    await expectTrpcError(await trpcRequest(server.baseUrl, 'plants.create', { token: tokens['body-trpc'], body }), 'tooManyRequests');
  });
});
