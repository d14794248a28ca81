/**
 * Rate limits (RATE_LIMIT_PER_TOKEN, RATE_LIMIT_AUTH_FAILURES; see docs/configuration.md) are not in the contract, but
 * their refusals are failures under /api, so the contract's error rules hold for them: an {error, message}
 * JSON body with its own value, documented in the OpenAPI document. This server runs with tiny limits
 * that refill slowly (one request per 100 s), so the tests meet them at once.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, setupServer } from '@test-support/api-fixture';
import type { ApiClient, ApiResponse } from '@test-support/http-client';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: '3/0.01', RATE_LIMIT_AUTH_FAILURES: '2/0.01' } });

function expectTooMany(response: ApiResponse): void {
  expectError(response, 'tooManyRequests');
  expect(response.headers.get('retry-after'), 'Retry-After').toMatch(/^[1-9]\d*$/);
}

describe('per token', () => {
  let limited: ApiClient;
  let answers: ApiResponse[];

  beforeAll(async () => {
    limited = server.client((await server.createToken('busy')).token);
    answers = [];
    for (let index = 0; index < 4; index++) answers.push(await limited.get('/api/plants'));
  });

  it('answers the requests within the limit', () => {
    for (const response of answers.slice(0, 3)) expectStatus(response, 200);
  });

  it('answers the request beyond it with 429, error 42900, an {error, message} body and Retry-After', () => {
    expectTooMany(answers[3]!);
  });

  it('limits each token on its own: another token of the same address is still served', async () => {
    const other = server.client((await server.createToken('calm')).token);
    expectStatus(await other.get('/api/plants'), 200);
  });
});

describe('failed authentication per address', () => {
  let answers: ApiResponse[];

  beforeAll(async () => {
    answers = [];
    for (let index = 0; index < 3; index++) answers.push(await server.anonymous.get('/api/plants', { authorization: `Bearer pst_${'B'.repeat(43)}` }));
  });

  it('answers the first failures with 401', () => {
    for (const response of answers.slice(0, 2)) expectError(response, 'invalidToken');
  });

  it('answers further failures from the address with 429, error 42900 and Retry-After', () => {
    expectTooMany(answers[2]!);
  });

  it('still serves a valid token from that address', async () => {
    const valid = server.client((await server.createToken('after-failures')).token);
    expectStatus(await valid.get('/api/plants'), 200);
  });
});
