/**
 * Security: tokens never reach the log and are stored only hashed; revoked and expired tokens are refused;
 * a member can never reach another's plant by any path or door (BOLA); a create can never set a field
 * beyond NewPlant (mass assignment). Each REST request leaves one log line whose requestId is the
 * response's X-Request-Id, so an operator can find a request and the log still holds no secret.
 */
import { readFileSync } from 'node:fs';

import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, expectStatus, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import { type ApiClient, type ApiResponse, describeExchange } from '@test-support/http-client';
import { type IssuedToken, runTokenCli } from '@test-support/token-command';
import { trpcCall, trpcData } from '@test-support/trpc-client';

const server = setupServer();

let memberA: IssuedToken;
let memberB: IssuedToken;
let revoked: IssuedToken;
let expired: IssuedToken;
let expiring: IssuedToken;
let expiringAt = 0; // set by the test that waits for it
let a: ApiClient;
let b: ApiClient;

/** Every REST exchange of this file, for the log check. */
const exchanges: ApiResponse[] = [];
const record = (response: ApiResponse) => {
  exchanges.push(response);
  return response;
};
/** A client that records its exchanges (no document check: some requests here are odd on purpose). */
const recording = (token: string | null): ApiClient => {
  const client = server.rawClient(token);
  return {
    request: async (...args) => record(await client.request(...args)),
    get: async (...args) => record(await client.get(...args)),
    post: async (...args) => record(await client.post(...args)),
    delete: async (...args) => record(await client.delete(...args)),
  };
};

/** Tokens that were sent and must never appear in the log or the database. */
const sentTokens = new Set<string>();
const UNKNOWN = `pst_${'q'.repeat(20)}${'Q'.repeat(23)}`;
const MALFORMED = 'pst_short-and-wrong';

async function setExpiry(tokenId: number, at: Date): Promise<void> {
  const changed = await server.database.execute('UPDATE "ApiToken" SET "expiresAt" = ? WHERE "id" = ?', [await server.database.dateTime(at), tokenId]);
  expect(changed).toBe(1);
}

beforeAll(async () => {
  memberA = await server.createToken('secret-a', 'member');
  memberB = await server.createToken('secret-b', 'member');
  revoked = await server.createToken('secret-revoked', 'member');
  expired = await server.createToken('secret-expired', 'member');
  expiring = await server.createToken('secret-expiring', 'member');
  await server.revokeToken(revoked.id);
  await setExpiry(expired.id, new Date(Date.now() - 60_000));
  for (const token of [server.adminToken, memberA.token, memberB.token, revoked.token, expired.token, expiring.token, UNKNOWN, MALFORMED]) {
    sentTokens.add(token);
  }
  a = recording(memberA.token);
  b = recording(memberB.token);
}, 300_000);


// ---------------------------------------------------------------------------------------------------------

describe('revoked and expired tokens', () => {
  const operations: [string, (client: ApiClient) => Promise<ApiResponse>][] = [
    ['GET /api/plants', (client) => client.get('/api/plants')],
    ['POST /api/plants', (client) => client.post('/api/plants', plantBody(660_001n, 'should not exist'))],
    ['DELETE /api/plants/{id}', (client) => client.delete('/api/plants/660002')],
  ];

  it.each(operations)('refuses %s with 401, error 40101 for a revoked and for an expired token', async (_, send) => {
    for (const token of [revoked.token, expired.token]) {
      const response = await send(recording(token));
      expectError(response, 'invalidToken');
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('shows the expiry written into the database as "expired" in token list (the date format is what Prisma reads)', async () => {
    const listed = await runTokenCli(server.databaseUrl, ['list']);
    expect(listed.code, listed.stderr).toBe(0);
    const line = listed.stdout.split('\n').find((row) => row.startsWith(`${expired.id}\t`));
    expect(line, listed.stdout).toContain('expired');
  });

  it('refuses them on the tRPC door too', async () => {
    for (const token of [revoked.token, expired.token, UNKNOWN]) {
      const answer = await trpcCall(server.baseUrl, 'query', 'me', { token });
      expect(answer.status, answer.text).toBe(401);
    }
    expect(trpcData(await trpcCall(server.baseUrl, 'query', 'me', { token: memberA.token }))).toEqual({ name: 'secret-a', role: 'member' });
  });

  it('accepts a token until its expiry and refuses it from then on', { timeout: 20_000 }, async () => {
    expiringAt = Date.now() + 3_000;
    await setExpiry(expiring.id, new Date(expiringAt));
    const client = recording(expiring.token);
    expectStatus(await client.get('/api/plants'), 200);
    expect(Date.now(), 'still before the expiry').toBeLessThan(expiringAt);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiringAt - Date.now()) + 300));
    expectError(await client.get('/api/plants'), 'invalidToken');
  });

  it('keeps nothing a revoked or expired token tried to create', async () => {
    const listed = await recording(server.adminToken).get('/api/plants?limit=1000');
    expect(listed.json.some((plant: { id: bigint }) => plant.id === 660_001n)).toBe(false);
  });
});

// The one home of the access rule's hostile forms (every spelling, method and door); access.test.ts keeps
// the rule's ordinary use. Here, so the log and at-rest checks below see these requests and their tokens too.
describe('object-level access (BOLA)', () => {
  const A_IDS = [610_001n, 610_002n];
  const B_IDS = [620_001n];
  const ADMIN_IDS = [630_001n];
  const MISSING = 699_999n;
  let admin: ApiClient;

  beforeAll(async () => {
    admin = recording(server.adminToken);
    for (const id of A_IDS) expectStatus(await a.post('/api/plants', plantBody(id, `a ${id}`, 'a')), 200);
    for (const id of B_IDS) expectStatus(await b.post('/api/plants', plantBody(id, `b ${id}`)), 200);
    for (const id of ADMIN_IDS) expectStatus(await admin.post('/api/plants', plantBody(id, `admin ${id}`)), 200);
  });

  /** Every spelling of a plant id in the DELETE path a client could try. */
  const spellings = (id: bigint): string[] => {
    const digits = String(id);
    return [
      digits,
      [...digits].map((digit) => `%3${digit}`).join(''),
      `%3${digits[0]}${digits.slice(1)}`,
      `000${digits}`,
      `%2B${digits}`,
      `+${digits}`,
      `${digits}%00`,
      `${digits}%20`,
      `%20${digits}`,
      `${digits}.0`,
      `${digits}e0`,
      `${digits}/`,
      `${digits}%2F`,
      `${digits}?id=${digits}`,
      `${digits}#x`,
      `-0${digits}`,
      `${digits};x`,
    ];
  };

  /** A delete by `client` of a plant it has no access to: never 204, and for a canonical id exactly a missing plant's answer. */
  async function expectCannotDelete(client: ApiClient, id: bigint): Promise<void> {
    for (const spelling of spellings(id)) {
      const response = await client.delete(`/api/plants/${spelling}`);
      expect(response.status, `DELETE /api/plants/${spelling} of a plant out of reach\n${describeExchange(response)}`).not.toBe(204);
      expect(response.status, describeExchange(response)).toBeLessThan(500);
      expect([400, 404], describeExchange(response)).toContain(response.status);
    }
    const foreign = await client.delete(`/api/plants/${id}`);
    const missing = await client.delete(`/api/plants/${MISSING}`);
    expectError(foreign, 'plantNotFound');
    expect(foreign.json.message.replace(String(id), 'N'), 'the same words as for a missing plant').toBe(missing.json.message.replace(String(MISSING), 'N'));
    expect(Object.keys(foreign.json).sort(), 'the same fields as for a missing plant').toEqual(Object.keys(missing.json).sort());
    expect([...foreign.headers.keys()].sort(), 'the same headers as for a missing plant').toEqual([...missing.headers.keys()].sort());
    // Other methods on the item path answer alike for a foreign and a missing plant.
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'POST']) {
      const onForeign = await client.request(method, `/api/plants/${id}`, method === 'PUT' || method === 'PATCH' || method === 'POST' ? { body: '{}' } : {});
      const onMissing = await client.request(method, `/api/plants/${MISSING}`, method === 'PUT' || method === 'PATCH' || method === 'POST' ? { body: '{}' } : {});
      expect(onForeign.status, describeExchange(onForeign)).toBe(onMissing.status);
      expect(onForeign.status, describeExchange(onForeign)).not.toBe(200);
      expect(onForeign.text.replace(String(id), 'N')).toBe(onMissing.text.replace(String(MISSING), 'N'));
    }
    // The tRPC door: the same procedure, the same rule.
    const viaTrpc = await trpcCall(server.baseUrl, 'mutation', 'plants.delete', { input: { id }, token: client === a ? memberA.token : memberB.token });
    expect(viaTrpc.status, `plants.delete over tRPC\n${viaTrpc.text}`).toBe(404);
  }

  async function listIds(client: ApiClient, query = 'limit=1000'): Promise<bigint[]> {
    const ids: bigint[] = [];
    let next: string | undefined = `/api/plants?${query}`;
    for (let pages = 0; next !== undefined && pages < 100; pages++) {
      const response = await client.get(next);
      expectStatus(response, 200);
      ids.push(...response.json.map((plant: { id: bigint }) => plant.id));
      next = nextLink(response);
    }
    return ids;
  }

  it("member A can neither delete nor see member B's or the admin's plants, by any spelling or door", { timeout: 60_000 }, async () => {
    for (const id of [...B_IDS, ...ADMIN_IDS]) {
      await expectCannotDelete(a, id);
      expect(await listIds(a), 'A lists').not.toContain(id);
      expect(await listIds(a, `after=${id - 1n}&limit=1`), `A lists after ${id - 1n}`).not.toContain(id);
      expect(await listIds(a, `after=${id - 1n}&limit=1&ownerId=2&userId=2&all=true`), 'A with extra query').not.toContain(id);
      // `owner` is a filter since 1.1.0, for admins only: a member naming anyone is refused, not served.
      expectError(await a.get(`/api/plants?after=${id - 1n}&limit=1&owner=${id}`), 'ownerFilterForAdmins');
    }
    const viaTrpc = trpcData<{ id: bigint }[]>(await trpcCall(server.baseUrl, 'query', 'plants.list', { input: { limit: 1000 }, token: memberA.token }));
    expect(viaTrpc.map((plant) => plant.id).sort()).toEqual([...A_IDS].sort());
  });

  it("member B can neither delete nor see member A's or the admin's plants, by any spelling or door", { timeout: 60_000 }, async () => {
    for (const id of [...A_IDS, ...ADMIN_IDS]) {
      await expectCannotDelete(b, id);
      expect(await listIds(b)).not.toContain(id);
      expect(await listIds(b, `after=${id - 1n}&limit=1`)).not.toContain(id);
    }
    expect(await listIds(b)).toEqual(B_IDS);
  });

  it('cannot overwrite another member\'s plant by creating its id (400, 40006), and the plant is unchanged', async () => {
    expectError(await b.post('/api/plants', plantBody(A_IDS[0]!, 'hijacked', 'b')), 'plantIdTaken', `a plant with id ${A_IDS[0]} already exists`);
    const stored = (await admin.get('/api/plants?limit=1000')).json.find((plant: { id: bigint }) => plant.id === A_IDS[0]);
    expect(stored).toEqual({ id: A_IDS[0], name: `a ${A_IDS[0]}`, tag: 'a' });
  });

  it('leaves every plant in place after all those attempts; the admin sees them all', async () => {
    const all = await listIds(admin);
    for (const id of [...A_IDS, ...B_IDS, ...ADMIN_IDS]) expect(all).toContain(id);
    expect(await listIds(a)).toEqual(A_IDS);
  });

  it('lets the owner and the admin delete (the checks above are not a broken delete)', async () => {
    expectStatus(await a.delete(`/api/plants/${A_IDS[1]}`), 204);
    expectStatus(await admin.delete(`/api/plants/%3${String(B_IDS[0]).slice(0, 1)}${String(B_IDS[0]).slice(1)}`), 204);
    expect(await listIds(b)).toEqual([]);
  });
});

describe('mass assignment', () => {
  const attempts: [string, (id: bigint) => string][] = [
    ['ownerId', (id) => `{"id": ${id}, "name": "mass", "ownerId": 1}`],
    ['owner', (id) => `{"id": ${id}, "name": "mass", "owner": {"connect": {"id": 1}}}`],
    ['createdAt', (id) => `{"id": ${id}, "name": "mass", "createdAt": "2000-01-01T00:00:00.000Z"}`],
    ['userId', (id) => `{"id": ${id}, "name": "mass", "userId": 1}`],
    ['role', (id) => `{"id": ${id}, "name": "mass", "role": "admin"}`],
    ['__proto__', (id) => `{"id": ${id}, "name": "mass", "__proto__": {"ownerId": 1}}`],
    ['constructor', (id) => `{"id": ${id}, "name": "mass", "constructor": {"prototype": {"ownerId": 1}}}`],
    ['ownerId (first)', (id) => `{"ownerId": 1, "id": ${id}, "name": "mass"}`],
  ];
  let nextId = 640_001n;

  it.each(attempts)('refuses a create with %s with 400, error 40005, and creates nothing', async (field, body) => {
    const id = nextId++;
    const response = await a.post('/api/plants', body(id));
    expectError(response, 'unknownField', field.split(' ')[0]);
    for (const client of [a, recording(server.adminToken)]) {
      const listed = await client.get('/api/plants?limit=1000');
      expect(listed.json.some((plant: { id: bigint }) => plant.id === id), `plant ${id} was created`).toBe(false);
    }
  });

  it('refuses the same over the tRPC door and creates nothing', async () => {
    const id = nextId++;
    const answer = await trpcCall(server.baseUrl, 'mutation', 'plants.create', { input: { id, name: 'mass', ownerId: 1 }, token: memberA.token });
    expect(answer.status, answer.text).toBe(400);
    const listed = await recording(server.adminToken).get('/api/plants?limit=1000');
    expect(listed.json.some((plant: { id: bigint }) => plant.id === id)).toBe(false);
  });

  it('leaves the owner of a plant to the token: a plant A creates is A\'s, whatever the body tried', async () => {
    const owners = await server.database.query('SELECT DISTINCT "ownerId" FROM "Plant" WHERE "name" = \'mass\'');
    expect(owners, 'plants named "mass" in the database').toEqual([]);
  });
});

describe('tokens at rest', () => {
  it('stores no token, nor its secret part, in any column of any table; only a hash', async () => {
    const tables = await server.database.tables();
    expect(tables).toContain('ApiToken');
    let cells = 0;
    for (const table of tables) {
      for (const row of await server.database.query(`SELECT * FROM "${table.replace(/"/g, '""')}"`)) {
        for (const [column, value] of Object.entries(row)) {
          cells++;
          const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
          for (const token of sentTokens) {
            const secret = token.slice(4);
            expect(text.includes(token), `${table}.${column} holds a token`).toBe(false);
            if (secret.length >= 16) expect(text.includes(secret.slice(0, 16)), `${table}.${column} holds part of a token's secret`).toBe(false);
            if (secret.length === 43) {
              const raw = Buffer.from(secret, 'base64url');
              expect(text.includes(raw.toString('hex')), `${table}.${column} holds a token's bytes in hex`).toBe(false);
            }
          }
        }
      }
    }
    const rows = await server.database.query<{ hash: string; prefix: string }>('SELECT "hash", "prefix" FROM "ApiToken"');
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const { hash, prefix } of rows) {
      expect(hash, 'ApiToken.hash is a SHA-256 in hex').toMatch(/^[0-9a-f]{64}$/);
      expect(prefix.length, 'the display prefix is short').toBeLessThanOrEqual(10);
    }
    console.log(`[secrets] ${cells} cells in ${tables.length} tables hold no token`);
  });

  it('has no token in the database files on disk either (data files and write-ahead log)', async () => {
    const files = await server.database.filesOnDisk();
    expect(files.length, 'database files found on disk').toBeGreaterThan(0);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const token of sentTokens) {
        expect(bytes.includes(Buffer.from(token)), `${file} holds a token`).toBe(false);
        if (token.length > 20) expect(bytes.includes(Buffer.from(token.slice(4, 20))), `${file} holds part of a token's secret`).toBe(false);
      }
    }
  });
});

describe('the log', () => {
  /** What the server printed after it started serving: the first-start message (the admin token, once) comes before. */
  function logAfterStart(): string {
    const log = server.log();
    const marker = log.indexOf('Plant Store is serving on');
    expect(marker, 'the server says it is serving').toBeGreaterThanOrEqual(0);
    return log.slice(marker);
  }

  beforeAll(async () => {
    // More ways to hand a token over: schemes, query strings, tRPC, bodies.
    const anonymous = recording(null);
    for (const token of sentTokens) {
      await anonymous.get('/api/plants', { authorization: `Bearer ${token}` });
      await anonymous.get('/api/plants', { authorization: `bearer   ${token}  ` });
      await anonymous.get(`/api/plants?access_token=${token}&token=${token}`);
      await anonymous.post('/api/plants', `{"id": 1, "name": "${token}"}`, { authorization: `Bearer ${token}` });
      await anonymous.delete('/api/plants/1', { authorization: `Token ${token}` });
      await trpcCall(server.baseUrl, 'query', 'me', { token });
      await trpcCall(server.baseUrl, 'query', 'tokens.list', { token });
    }
    await anonymous.get('/api/plants', { authorization: `Basic ${Buffer.from(`admin:${server.adminToken}`).toString('base64')}` });
    await anonymous.get('/api/plants', { authorization: `Bearer ${server.adminToken}`, headers: { 'X-Api-Key': server.adminToken, Cookie: `token=${server.adminToken}` } });
    // pino writes synchronously, but the pipe to this process is not: wait for the last request's line.
    const lastId = exchanges.at(-1)!.headers.get('x-request-id')!;
    for (let waited = 0; waited < 5_000 && !server.log().includes(lastId); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  }, 120_000);

  it('never holds a token value, its secret part, or "Bearer <credential>" once the server runs', () => {
    const log = logAfterStart();
    for (const token of sentTokens) {
      expect(log.includes(token), `the log holds the token ${token.slice(0, 8)}…`).toBe(false);
      if (token.length > 20) expect(log.includes(token.slice(4, 20)), `the log holds part of the token ${token.slice(0, 8)}…`).toBe(false);
    }
    expect(log.match(/bearer\s+\S+/gi) ?? [], '"Bearer <credential>" in the log').toEqual([]);
    expect(log.match(/pst_[A-Za-z0-9_-]{7,}/g) ?? [], 'token-like strings in the log').toEqual([]);
    expect(log.match(/basic\s+[a-z0-9+/=]{8,}/gi) ?? [], '"Basic <credential>" in the log').toEqual([]);
  });

  it('shows the first admin token only in the first-start message, once, and no other token there', () => {
    const log = server.log();
    const before = log.slice(0, log.indexOf('Plant Store is serving on'));
    expect(before).toContain(server.adminToken);
    for (const token of sentTokens) if (token !== server.adminToken) expect(before.includes(token)).toBe(false);
  });

  it('logs each REST request on one line whose requestId is the X-Request-Id of its response', () => {
    const lines = server
      .log()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'request');
    const byId = new Map<string, Record<string, unknown>[]>();
    for (const entry of lines) byId.set(String(entry.requestId), [...(byId.get(String(entry.requestId)) ?? []), entry]);
    expect(exchanges.length).toBeGreaterThan(100);
    for (const response of exchanges) {
      const requestId = response.headers.get('x-request-id');
      expect(requestId, `X-Request-Id of\n${describeExchange(response)}`).toMatch(/^[0-9a-f-]{36}$/);
      const entries = byId.get(requestId!) ?? [];
      expect(entries.length, `log lines for ${requestId}\n${describeExchange(response)}`).toBe(1);
      const url = new URL(response.request.url);
      expect(entries[0], `the log line of\n${describeExchange(response)}`).toMatchObject({ method: response.request.method, path: url.pathname, status: response.status });
      expect(Object.keys(entries[0]!).filter((key) => /auth|token|header|cookie|query|body/i.test(key)), 'fields that could carry a secret').toEqual([]);
    }
    expect(new Set(exchanges.map((response) => response.headers.get('x-request-id'))).size, 'request ids are unique').toBe(exchanges.length);
    console.log(`[secrets] ${exchanges.length} REST requests, each with exactly one log line under its X-Request-Id`);
  });
});
