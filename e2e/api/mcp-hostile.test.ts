/**
 * The MCP door under attack, on the built server: what no well-behaved client sends. Every refusal is
 * clean and in its layer's format: an HTTP refusal of the front's guards is the catalogue's
 * `{error, message}` (401 with the same challenge as REST, 403, 404, 405, 413, 415, 429), anything about
 * the JSON-RPC message is a JSON-RPC error, a tool's own failure is an `isError` result. Never a 5xx.
 */
import { randomBytes } from 'node:crypto';

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectNoInternalDetail, expectStatus, setupServer } from '@test-support/api-fixture';
import { expectRpcError, expectToolError, MCP_HEADERS, MCP_PATH, postMcp, rpcText } from '@test-support/mcp-client';
import { api, type ApiResponse, describeExchange, rawRequest } from '@test-support/http-client';

import { BODY_LIMIT_BYTES, JSON_MAX_DEPTH, kib, MCP_REQUEST_UNITS } from '@/shared/limits';

const LIST = rpcText('tools/list', {});
const callText = (name: string, args: unknown, id: string | number = 1) => rpcText('tools/call', { name, arguments: args }, id);

/** A JSON value nested `depth` arrays deep. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function expectApiHeaders(response: ApiResponse): void {
  const exchange = describeExchange(response);
  expect(response.headers.get('x-request-id'), exchange).toMatch(/^[0-9a-f-]{36}$/);
  expect(response.headers.get('x-content-type-options'), exchange).toBe('nosniff');
  expect(response.headers.get('cache-control'), exchange).toBe('no-store');
  expect(response.headers.get('content-security-policy'), exchange).toContain("default-src 'none'");
}

describe('with the default limits', () => {
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', RATE_LIMIT_AUTH_FAILURES: 'off' } });
  let token = '';
  const post = (body: string, options: Parameters<typeof postMcp>[3] = {}) => postMcp(server.baseUrl, token, body, options);

  beforeAll(async () => {
    token = (await server.createToken('mcp-hostile', 'member')).token;
  });

  describe('the token', () => {
    it('is required: none is 401, error 40100, with the same challenge as REST', async () => {
      const response = await postMcp(server.baseUrl, null, LIST);
      expectError(response, 'missingToken');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plants"');
      expectApiHeaders(response);
    });

    it('must be valid: a wrong one is 401, error 40101, error="invalid_token"', async () => {
      const response = await postMcp(server.baseUrl, `pst_${'A'.repeat(43)}`, LIST);
      expectError(response, 'invalidToken');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plants", error="invalid_token"');
    });

    it('is checked before the body is read: an anonymous 1 MB body is a 401, not a 413', async () => {
      expectError(await postMcp(server.baseUrl, null, 'x'.repeat(1024 * 1024)), 'missingToken');
    });
  });

  describe('HTTP', () => {
    it('answers GET, DELETE, PUT, PATCH and HEAD with 405 and Allow: POST, OPTIONS (no sessions, no event stream), before the token', async () => {
      for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
        const response = await api(server.baseUrl, null).request(method, MCP_PATH, { headers: { Accept: 'text/event-stream' } });
        expectError(response, 'methodNotAllowed');
        expect(response.headers.get('allow'), method).toBe('POST, OPTIONS');
      }
      const head = await api(server.baseUrl, token).request('HEAD', MCP_PATH);
      expect(head.status).toBe(405);
      expect(head.text).toBe('');
      const options = await api(server.baseUrl, null).request('OPTIONS', MCP_PATH);
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('POST, OPTIONS');
    });

    it('has no sub-paths: /api/mcp/… is 404, error 40400', async () => {
      expectError(await api(server.baseUrl, token).post(`${MCP_PATH}/sse`, LIST), 'routeNotFound');
    });

    it('keeps no sessions: a request naming one is 404 "Session not found", so a client starts afresh', async () => {
      const response = await post(LIST, { headers: { 'Mcp-Session-Id': randomBytes(16).toString('hex') } });
      expectRpcError(response, 404, -32001, /Session not found/);
    });

    it('takes application/json only (415, error 41500) and needs an Accept of JSON and event streams (406)', async () => {
      expectError(await post(LIST, { contentType: 'text/plain' }), 'unsupportedMediaType');
      expectError(await post(LIST, { contentType: null }), 'unsupportedMediaType');
      expectRpcError(await post(LIST, { headers: { Accept: 'application/json' } }), 406, -32000, /Not Acceptable/);
    });

    it('refuses a protocol version it does not speak (400), and negotiates its own on initialize', async () => {
      expectRpcError(await post(LIST, { headers: { 'MCP-Protocol-Version': '1999-01-01' } }), 400, -32000, /Unsupported protocol version/);
      const initialize = await post(rpcText('initialize', { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'old', version: '0' } }), {
        headers: { 'MCP-Protocol-Version': '1999-01-01' },
      });
      expectStatus(initialize, 200);
      expect(initialize.json.result.protocolVersion).toBe('2025-11-25');
    });

    it('refuses a page from an unknown origin (403, error 40300), as MCP asks against DNS rebinding; a page on loopback is the machine\'s own', async () => {
      for (const origin of ['https://evil.example', 'http://localhost.evil.example:3000', 'null']) {
        expectError(await post(LIST, { headers: { Origin: origin } }), 'forbidden');
      }
      for (const origin of ['http://localhost:6274', 'http://127.0.0.1:3000', 'http://[::1]:8080']) expectStatus(await post(LIST, { headers: { Origin: origin } }), 200);
    });

    it(`stops reading a body at ${kib(BODY_LIMIT_BYTES)}: 413, error 41300`, async () => {
      expectError(await post(callText('plants_list', { q: 'x'.repeat(BODY_LIMIT_BYTES + 1) })), 'bodyTooLarge');
      const chunked = await rawRequest(server.baseUrl, {
        method: 'POST',
        path: MCP_PATH,
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        // 80 KiB of white space: past the limit, with no Content-Length to refuse it by.
        chunks: Array.from({ length: BODY_LIMIT_BYTES / 1024 + 16 }, () => new Uint8Array(1024).fill(0x20)),
      });
      expectError(chunked, 'bodyTooLarge');
    });
  });

  describe('the message', () => {
    it('must be JSON: broken, empty, duplicate keys and invalid UTF-8 are parse errors (-32700), id null', async () => {
      for (const body of ['{"jsonrpc": "2.0", "id": 1, "method": ', '', '   ', '{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}']) {
        const response = await post(body);
        expectRpcError(response, 400, -32700, /Parse error/);
        expect(response.json.id).toBeNull();
      }
      const invalidUtf8 = await api(server.baseUrl, token).post(MCP_PATH, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), { headers: MCP_HEADERS });
      expectRpcError(invalidUtf8, 400, -32700, /UTF-8/);
    });

    it('must be one object: numbers, strings, null and arrays are invalid requests (-32600)', async () => {
      for (const body of ['42', '"tools/list"', 'null', 'true']) expectRpcError(await post(body), 400, -32600, /one JSON-RPC message/);
    });

    it('must not be a batch (MCP removed batching in 2025-06-18): -32600, and nothing in it runs', async () => {
      const create = callText('plants_create', { id: 424242, name: 'batched' });
      expectRpcError(await post(`[${LIST},${create}]`), 400, -32600, /batches are not accepted/);
      expectRpcError(await post('[]'), 400, -32600, /batches are not accepted/);
      const list = await post(callText('plants_list', { limit: 1000 }));
      expect(list.json.result.structuredContent.items).toEqual([]);
    });

    it('must be JSON-RPC 2.0: no version, another version, an object id, no method are invalid requests (-32600)', async () => {
      for (const body of [
        '{"id":1,"method":"tools/list"}',
        '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":1,"method":7}',
      ]) {
        expectRpcError(await post(body), 400, -32600, /JSON-RPC 2.0/);
      }
    });

    it('keeps its id exact or refuses it: an integer id beyond 2^53 is -32600 (it would come back rounded); a string id comes back as sent', async () => {
      expectRpcError(await post(LIST.replace('"id":1', '"id":9007199254740993')), 400, -32600, /9007199254740993.*as a string/);
      const stringId = await post(rpcText('tools/list', {}, '9007199254740993'));
      expectStatus(stringId, 200);
      expect(stringId.json.id).toBe('9007199254740993');
    });

    it(`may nest ${JSON_MAX_DEPTH} levels, no deeper (-32700, found before anything parses it); 100,000 deep costs nothing`, async () => {
      // The message, params and arguments are three levels; the argument's arrays the rest.
      const within = await post(callText('plants_list', { q: JSON.parse(nested(JSON_MAX_DEPTH - 3)) }));
      expectStatus(within, 200);
      expectToolError(within.json.result, 'wrongType', 'q must be text');
      expectRpcError(await post(callText('plants_list', { q: JSON.parse(nested(JSON_MAX_DEPTH - 2)) })), 400, -32700, new RegExp(`more than ${JSON_MAX_DEPTH} levels`));
      const startedAt = performance.now();
      expectRpcError(await post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plants_list","arguments":{"q":${nested(30_000)}}}}`), 400, -32700);
      expect(performance.now() - startedAt).toBeLessThan(2_000);
    });

    it('answers an unknown method with -32601 and an unknown or malformed tool call with -32602', async () => {
      for (const method of ['resources/list', 'plants/create', 'tools/delete', '__proto__']) {
        const response = await post(rpcText(method, {}));
        expectStatus(response, 200);
        expect(response.json.error.code, method).toBe(-32601n);
      }
      const unknown = await post(callText('plants_drop_all', {}));
      expect(unknown.json.error).toEqual({ code: -32602n, message: 'Unknown tool: plants_drop_all' });
      const long = await post(callText('x'.repeat(5000), {}));
      expect(long.json.error.code).toBe(-32602n);
      expect(long.json.error.message.length).toBeLessThan(200);
      for (const params of [{ name: 'plants_list', arguments: [1, 2] }, { name: 'plants_list', arguments: 'all' }, { arguments: {} }, { name: 7 }]) {
        const response = await post(rpcText('tools/call', params));
        expect(response.json.error?.code, JSON.stringify(params)).toBe(-32602n);
        expectNoInternalDetail(response.json.error.message);
      }
    });

    it('takes notifications and stray responses with 202 and no body', async () => {
      for (const body of ['{"jsonrpc":"2.0","method":"notifications/initialized"}', '{"jsonrpc":"2.0","id":99,"result":{}}']) {
        const response = await post(body);
        expect(response.status, body).toBe(202);
        expect(response.text).toBe('');
      }
    });
  });

  describe("a tool's arguments", () => {
    it('are judged by the procedure: huge values and thousands of unknown fields are its ordinary refusals', async () => {
      expectToolError((await post(callText('plants_create', { id: 1, name: 'x'.repeat(60_000) }))).json.result, 'invalidValue', 'at most 200 characters');
      const many = Object.fromEntries(Array.from({ length: 3000 }, (_, index) => [`f${index}`, index]));
      expectToolError((await post(callText('plants_create', { id: 1, name: 'many', ...many }))).json.result, 'unknownField');
      expectToolError((await post(callText('plants_create', JSON.parse('{"id":1,"name":"proto","__proto__":{"admin":true}}')))).json.result, 'unknownField', '__proto__');
    });

    it('never read an int64 rounded: a JSON number beyond 2^53 is refused (40003), a fraction, an exponent or other text is the wrong type', async () => {
      const exact = (args: string) => post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plants_create","arguments":${args}}}`);
      for (const id of ['9007199254740992', '-9007199254740992', '9223372036854775808', '9'.repeat(5000)]) {
        const refused = expectToolError((await exact(`{"id":${id},"name":"big"}`)).json.result, 'wrongType', 'send it as a string of digits');
        expect(refused.message.length).toBeLessThan(200);
      }
      expectToolError((await exact('{"id":"9223372036854775808","name":"big"}')).json.result, 'invalidValue', 'at most 9223372036854775807');
      expectToolError((await exact('{"id":1e3,"name":"exp"}')).json.result, 'wrongType');
      expectToolError((await exact('{"id":"0x10","name":"hex"}')).json.result, 'wrongType');
      expectToolError((await exact('{"id":" 7","name":"space"}')).json.result, 'wrongType');
      expectToolError((await exact('{"id":null,"name":"null"}')).json.result, 'wrongType');
    });
  });

  it('is never answered 5xx, whatever the arguments and methods (fast-check)', { timeout: 60_000 }, async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`[mcp fuzz] seed ${seed} (FUZZ_SEED=${seed} replays it)`);
    const toolNames = ['plants_create', 'plants_list', 'plants_update', 'plants_delete', 'webhooks_list', 'nope'];
    const value = fc.jsonValue({ maxDepth: 4 });
    const message = fc.oneof(
      fc.record({ name: fc.constantFrom(...toolNames), args: fc.dictionary(fc.constantFrom('id', 'name', 'tag', 'limit', 'after', 'q', 'owner', '__proto__', 'x'), value) }).map(({ name, args }) => callText(name, args)),
      fc.record({ method: fc.oneof(fc.constantFrom('tools/list', 'tools/call', 'initialize', 'ping', 'resources/read'), fc.string()), params: value }).map(({ method, params }) => rpcText(method, params)),
      fc.jsonValue({ maxDepth: 5 }).map((json) => JSON.stringify(json)),
      fc.string({ maxLength: 200 }),
    );
    let sent = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(message, async (body) => {
        const response = await post(body);
        sent++;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status, describeExchange(response)).toBeLessThan(500);
        if (response.json?.error?.message) expectNoInternalDetail(String(response.json.error.message), describeExchange(response));
        const result = response.json?.result;
        if (result?.isError) expectToolError(result, Number(JSON.parse(result.content[0].text).error));
      }),
      { seed, numRuns: 300, interruptAfterTimeLimit: 40_000 },
    );
    console.log(`[mcp fuzz] ${sent} requests: ${[...statuses].map(([status, count]) => `${status}×${count}`).join(', ')}`);
    expect(server.log()).not.toMatch(/"status":5\d\d/);
  });
});

describe('floods (RATE_LIMIT_PER_TOKEN=4/0.01, RATE_LIMIT_AUTH_FAILURES=2/0.01)', () => {
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: '4/0.01', RATE_LIMIT_AUTH_FAILURES: '2/0.01' } });

  it(`charges an MCP request ${MCP_REQUEST_UNITS} units and a REST request one, from the one bucket of the token: past 4 units either door is 429`, async () => {
    const { token } = await server.createToken('mcp-flood');
    const rest = server.rawClient(token);
    expect(MCP_REQUEST_UNITS).toBe(2);
    expectStatus(await rest.get('/api/plants'), 200);
    expectStatus(await postMcp(server.baseUrl, token, callText('plants_list', {})), 200);
    expectStatus(await rest.get('/api/plants'), 200);
    const refused = await postMcp(server.baseUrl, token, LIST);
    expectError(refused, 'tooManyRequests');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await rest.get('/api/plants'), 'tooManyRequests');
  });

  it('counts invalid tokens per address across the doors: the third is 429', async () => {
    const guess = `pst_${'G'.repeat(43)}`;
    expectError(await postMcp(server.baseUrl, guess, LIST), 'invalidToken');
    expectError(await server.rawClient(guess).get('/api/plants'), 'invalidToken');
    expectError(await postMcp(server.baseUrl, guess, LIST), 'tooManyRequests');
  });
});
