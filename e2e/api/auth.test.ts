import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import type { ApiResponse, RequestOptions } from '@test-support/http-client';
import type { IssuedToken } from '@test-support/token-command';

const server = setupServer();

const CHALLENGE = 'Bearer realm="plants"';
/** Well-formed (prefix and length) but never issued. */
const UNKNOWN_TOKEN = `pst_${'A'.repeat(43)}`;

let member: IssuedToken;
let revoked: IssuedToken;
let expired: IssuedToken;
let idCounter = 70_000n;

beforeAll(async () => {
  member = await server.createToken('auth-member', 'member');
  revoked = await server.createToken('auth-revoked', 'member');
  await server.revokeToken(revoked.id);
  expired = await server.createToken('auth-expired', 'member');
  // No CLI option issues an already expired token: move this one's expiry into the past in the server's own database.
  const changed = await server.database.execute('UPDATE "ApiToken" SET "expiresAt" = "createdAt" WHERE "id" = ?', [expired.id]);
  expect(changed).toBe(1);
});

/** The three operations, each as a function of the request options (the Authorization header). */
const operations: [string, (options: RequestOptions) => Promise<ApiResponse>][] = [
  ['POST /api/plants', (options) => server.anonymous.post('/api/plants', plantBody(idCounter++, 'auth'), options)],
  ['GET /api/plants', (options) => server.anonymous.get('/api/plants', options)],
  ['DELETE /api/plants/{id}', (options) => server.anonymous.delete(`/api/plants/${idCounter++}`, options)],
];

function expectChallenge(response: ApiResponse, invalidToken: boolean): void {
  const challenge = response.headers.get('www-authenticate');
  if (invalidToken) {
    expect(challenge, 'WWW-Authenticate').toMatch(/^Bearer\s+/i);
    expect(challenge).toContain('realm="plants"');
    expect(challenge).toContain('error="invalid_token"');
  } else {
    expect(challenge, 'WWW-Authenticate').toBe(CHALLENGE);
  }
}

describe.each(operations)('%s', (_, send) => {
  it('answers 401, error 40100 and WWW-Authenticate: Bearer realm="plants" (no error=) without an Authorization header', async () => {
    const response = await send({ authorization: null });
    expectError(response, 'missingToken');
    expectChallenge(response, false);
  });

  it('answers 401, error 40101 with error="invalid_token" for a token that was never issued', async () => {
    const response = await send({ authorization: `Bearer ${UNKNOWN_TOKEN}` });
    expectError(response, 'invalidToken');
    expectChallenge(response, true);
  });

  it('answers 401, error 40101 with error="invalid_token" for a malformed token', async () => {
    const response = await send({ authorization: 'Bearer not-a-token' });
    expectError(response, 'invalidToken');
    expectChallenge(response, true);
  });

  it('answers 401, error 40101 with error="invalid_token" for a revoked token', async () => {
    const response = await send({ authorization: `Bearer ${revoked.token}` });
    expectError(response, 'invalidToken');
    expectChallenge(response, true);
  });

  it('answers 401, error 40101 with error="invalid_token" for an expired token', async () => {
    const response = await send({ authorization: `Bearer ${expired.token}` });
    expectError(response, 'invalidToken');
    expectChallenge(response, true);
  });

  it('answers 401 with a Bearer challenge to the Basic scheme', async () => {
    const response = await send({ authorization: `Basic ${Buffer.from('admin:secret').toString('base64')}` });
    expectStatus(response, 401);
    const value = Number(response.json?.error);
    expect([40100, 40101]).toContain(value);
    expectError(response, 401, value);
    expectChallenge(response, value === 40101);
  });

  it('answers 401 to the token sent without a scheme word', async () => {
    const response = await send({ authorization: member.token });
    expectStatus(response, 401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="plants"/);
  });

  it('answers 401 to "Bearer" with no token', async () => {
    const response = await send({ authorization: 'Bearer' });
    expectStatus(response, 401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="plants"/);
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts the scheme word written %s', async (scheme) => {
    const response = await send({ authorization: `${scheme} ${member.token}` });
    expect([200, 204, 404], `${response.status} ${response.text}`).toContain(response.status);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });
});

describe('authentication, beyond the status', () => {
  it('checks the token before the body: an anonymous invalid body gets 401, not 400', async () => {
    const response = await server.anonymous.post('/api/plants', '{"id": ', { authorization: null });
    expectError(response, 'missingToken');
  });

  it('checks the token before the media type: an anonymous text/plain body gets 401, not 415', async () => {
    const response = await server.anonymous.post('/api/plants', plantBody(1, 'x'), { authorization: null, contentType: 'text/plain' });
    expectError(response, 'missingToken');
  });

  it('stores nothing for a create with a revoked token', async () => {
    expectError(await server.anonymous.post('/api/plants', plantBody(71_001, 'ghost'), { authorization: `Bearer ${revoked.token}` }), 'invalidToken');
    const list = await server.admin.get('/api/plants?limit=1000');
    expect(list.json.some((plant: { id: bigint }) => plant.id === 71_001n)).toBe(false);
  });

  it('accepts a token only in the Authorization header, not as a query parameter', async () => {
    const response = await server.anonymous.get(`/api/plants?access_token=${member.token}`, { authorization: null });
    expectStatus(response, 401);
  });

  it('keeps a revoked token revoked while other tokens of the user work', async () => {
    const second = await server.createToken('auth-revoked');
    expectStatus(await server.client(second.token).get('/api/plants'), 200);
    expectError(await server.client(revoked.token).get('/api/plants'), 'invalidToken');
  });
});
