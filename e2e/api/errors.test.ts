/**
 * Every failure under /api answers `Content-Type: application/json` with exactly {error, message}: unknown
 * paths (404), wrong methods (405 with Allow) and the server's own faults (500) included, with no internal
 * detail. The typed tRPC endpoint keeps its own wire format, but no internal detail either.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectNoInternalDetail, expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import { type ApiResponse } from '@test-support/http-client';
import { projectRoot } from '@test-support/server-process';

/** The values the contract's conditions map to, as numbers on purpose: this file checks the wire values themselves (the catalogue is src/shared/errors.ts). */
const ERROR_VALUES = [40000, 40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40100, 40101, 40400, 40401, 40500, 41300, 41500, 50000];

function allowed(response: ApiResponse): string[] {
  return (response.headers.get('allow') ?? '').split(',').map((method) => method.trim().toUpperCase()).filter(Boolean);
}

describe('the REST surface', () => {
  const server = setupServer();

  describe('unknown paths', () => {
    it.each(['/api/nope', '/api', '/api/plants/1/leaves', '/api/plant', '/api/PLANTS'])('answers GET %s with 404, error 40400 as JSON', async (target) => {
      expectError(await server.admin.get(target), 404, 40400);
    });

    it('answers 404 JSON to an unknown path without a token too', async () => {
      expectError(await server.anonymous.get('/api/nope'), 404, 40400);
    });

    it('answers POST and DELETE to an unknown path with 404, error 40400', async () => {
      expectError(await server.admin.post('/api/nope', '{}'), 404, 40400);
      expectError(await server.admin.delete('/api/nope/1'), 404, 40400);
    });
  });

  describe('wrong methods', () => {
    it.each(['PUT', 'PATCH', 'DELETE'])('answers %s /api/plants with 405, error 40500 and Allow: GET, POST', async (method) => {
      const response = await server.admin.request(method, '/api/plants', method === 'DELETE' ? {} : { body: plantBody(1, 'x') });
      expectError(response, 405, 40500);
      expect(allowed(response)).toEqual(expect.arrayContaining(['GET', 'POST']));
      expect(allowed(response)).not.toContain(method);
      expect(allowed(response)).not.toContain('DELETE');
    });

    // PATCH is an operation of /api/plants/{id} since version 1.1.0.
    it.each(['POST', 'GET', 'PUT'])('answers %s /api/plants/1 with 405, error 40500 and Allow: PATCH, DELETE', async (method) => {
      const response = await server.admin.request(method, '/api/plants/1', method === 'GET' ? {} : { body: plantBody(1, 'x') });
      expectError(response, 405, 40500);
      expect(allowed(response)).toContain('DELETE');
      expect(allowed(response)).toContain('PATCH');
      expect(allowed(response)).not.toContain(method);
    });

    it('answers a wrong method without a token with 405 as well (the method is wrong whoever asks)', async () => {
      const response = await server.anonymous.request('PUT', '/api/plants', { body: '{}' });
      expectError(response, 405, 40500);
      expect(allowed(response)).toEqual(expect.arrayContaining(['GET', 'POST']));
    });
  });

  describe('error bodies', () => {
    it('are exactly {error, message} as application/json for every kind of client error', async () => {
      const member = server.client((await server.createToken('errors-member')).token);
      expectStatus(await member.post('/api/plants', plantBody(5, 'five')), 200);
      const cases: [ApiResponse, number, number][] = [
        [await member.post('/api/plants', '{'), 400, 40000],
        [await member.post('/api/plants', '[]'), 400, 40001],
        [await member.post('/api/plants', '{"name": "x"}'), 400, 40002],
        [await member.post('/api/plants', '{"id": "1", "name": "x"}'), 400, 40003],
        [await member.post('/api/plants', '{"id": 1, "name": ""}'), 400, 40004],
        [await member.post('/api/plants', '{"id": 1, "name": "x", "color": "red"}'), 400, 40005],
        [await member.post('/api/plants', plantBody(5, 'again')), 400, 40006],
        [await member.get('/api/plants?limit=0'), 400, 40007],
        [await member.delete('/api/plants/abc'), 400, 40008],
        [await server.anonymous.get('/api/plants'), 401, 40100],
        [await server.anonymous.get('/api/plants', { authorization: 'Bearer nope' }), 401, 40101],
        [await member.get('/api/nope'), 404, 40400],
        [await member.delete('/api/plants/6'), 404, 40401],
        [await member.request('PUT', '/api/plants', { body: '{}' }), 405, 40500],
        [await member.post('/api/plants', `{"id": 1, "name": "${'x'.repeat(70_000)}"}`), 413, 41300],
        [await member.post('/api/plants', plantBody(1, 'x'), { contentType: 'text/plain' }), 415, 41500],
      ];
      for (const [response, status, value] of cases) expectError(response, status, value);
      // Distinct conditions, distinct values.
      expect(new Set(cases.map(([response]) => response.json.error)).size).toBe(cases.length);
    });

    it('carry messages a person can act on (they name what is wrong)', async () => {
      expectError(await server.admin.post('/api/plants', plantBody(1, 'n'.repeat(201))), 400, 40004, /name must be at most 200 characters/);
      expectError(await server.admin.get('/api/plants?limit=5000'), 400, 40007, /limit/);
      expectError(await server.admin.delete('/api/plants/abc'), 400, 40008, /id/);
      expectError(await server.admin.post('/api/plants', '{"id": 1, "name": "x", "color": 1}'), 400, 40005, /color/);
    });

    it('carry a message of at most 1,000 characters, however long the field name they quote', async () => {
      const key = `k${'\u{1F33F}'.repeat(15_000)}`;
      const response = await server.admin.post('/api/plants', JSON.stringify({ id: 1, name: 'x', [key]: 1 }));
      expectError(response, 400, 40005, /^unknown field "k/);
      expect([...response.json.message].length).toBeLessThanOrEqual(1000);
      // The name is quoted cut short (UNKNOWN_FIELDS_NAMED, QUOTED_NAME_MAX_LENGTH in src/shared/limits.ts).
      expect(response.json.message).toMatch(/^unknown field "k\u{1F33F}+…"/u);
      expect(response.json.message.isWellFormed(), 'cut between code points, not inside a surrogate pair').toBe(true);
    });

    it('carry an X-Request-Id header on every answer', async () => {
      for (const response of [await server.admin.get('/api/plants'), await server.admin.get('/api/nope'), await server.anonymous.get('/api/plants')]) {
        expect(response.headers.get('x-request-id'), `${response.request.method} ${response.request.url}`).toMatch(/^\S{8,}$/);
      }
    });
  });

  describe('the documentation of error values', () => {
    it('lists every error value in the OpenAPI document', async () => {
      const text = JSON.stringify(server.conformance.document);
      for (const value of ERROR_VALUES) expect(text, `error value ${value} in the OpenAPI document`).toContain(String(value));
    });

    it('lists every error value in docs/api.md', () => {
      let apiDoc = '';
      try {
        apiDoc = readFileSync(path.join(projectRoot, 'docs', 'api.md'), 'utf8');
      } catch {
        expect.fail('docs/api.md is missing; the contract wants the error values documented there (the README links it)');
      }
      for (const value of ERROR_VALUES) expect(apiDoc, `error value ${value} in docs/api.md`).toContain(String(value));
    });
  });

  describe('the typed tRPC endpoint', () => {
    it('keeps its own wire format but reveals no internal detail for invalid input', async () => {
      const response = await server.rawClient(server.adminToken).post('/api/trpc/plants.create', '{"json": {"id": "x", "name": 5, "extra": true}}');
      expect(response.status).toBe(400);
      expectNoInternalDetail(response.text, `POST /api/trpc/plants.create → ${response.text}`);
      expect(response.text).not.toMatch(/stack/i);
    });

    it('reveals no internal detail when the token is missing', async () => {
      const response = await server.rawClient(null).get('/api/trpc/plants.list');
      expect(response.status).toBe(401);
      expectNoInternalDetail(response.text, `GET /api/trpc/plants.list → ${response.text}`);
    });
  });
});

describe('a server fault (the Plant table is gone)', () => {
  const server = setupServer();

  beforeAll(async () => {
    expectStatus(await server.admin.post('/api/plants', plantBody(1, 'doomed')), 200);
    await server.database.execute('DROP TABLE "Plant"');
  });

  async function expectLoggedWithRequestId(response: ApiResponse): Promise<void> {
    const requestId = response.headers.get('x-request-id');
    expect(requestId, 'X-Request-Id header').toMatch(/^\S{8,}$/);
    // The log is written by another process: poll its output for a moment instead of sleeping.
    const deadline = Date.now() + 5_000;
    while (!server.log().includes(requestId!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.log(), `the server's log (stdout or stderr) should contain the request id ${requestId}`).toContain(requestId!);
  }

  it('answers GET /api/plants with 500, error 50000 and a generic message', async () => {
    const response = await server.admin.get('/api/plants');
    expectError(response, 500, 50000);
    expect(response.json.message).not.toMatch(/no such table|Plant|table/i);
  });

  it('logs the failure with the request id that the X-Request-Id header carries', async () => {
    const response = await server.admin.get('/api/plants');
    expectError(response, 500, 50000);
    await expectLoggedWithRequestId(response);
  });

  it('says what failed in the log line of that request id', async () => {
    const response = await server.admin.get('/api/plants');
    const requestId = response.headers.get('x-request-id')!;
    await expectLoggedWithRequestId(response);
    const logged = server
      .log()
      .split('\n')
      .filter((line) => line.includes(requestId))
      .join('\n');
    expect(logged).toMatch(/no such table|Plant/i);
  });

  it('answers POST /api/plants with 500, error 50000, logged with its request id', async () => {
    const response = await server.admin.post('/api/plants', plantBody(2, 'x'));
    expectError(response, 500, 50000);
    expect(response.json.message).not.toMatch(/no such table|Plant|table/i);
    await expectLoggedWithRequestId(response);
  });

  it('answers DELETE /api/plants/1 with 500, error 50000, logged with its request id', async () => {
    const response = await server.admin.delete('/api/plants/1');
    expectError(response, 500, 50000);
    await expectLoggedWithRequestId(response);
  });

  it('puts the request id of the X-Request-Id header into the 500 message (docs/api.md)', async () => {
    const response = await server.admin.get('/api/plants');
    expectError(response, 500, 50000);
    expect(response.json.message).toContain(response.headers.get('x-request-id'));
  });

  it('gives each failed request its own request id', async () => {
    const [first, second] = [await server.admin.get('/api/plants'), await server.admin.get('/api/plants')];
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });

  it('still authenticates: a fault in plants does not open the door (401 without a token)', async () => {
    expectError(await server.anonymous.get('/api/plants'), 401, 40100);
  });

  it('reveals no internal detail on the tRPC endpoint either', async () => {
    const response = await server.rawClient(server.adminToken).get(`/api/trpc/plants.list?input=${encodeURIComponent('{"json":{}}')}`);
    expect(response.status, response.text).toBe(500);
    expectNoInternalDetail(response.text, `GET /api/trpc/plants.list → ${response.text}`);
    expect(response.text).not.toMatch(/no such table|stack/i);
  });
});
