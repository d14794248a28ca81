/**
 * Idempotency-Key on POST /api/plants (docs/contract.md, "1.1.0: idempotent create"): a retry with the same key and body is
 * answered as the first request was and creates nothing; another body is a 422, a key in flight a 409,
 * a malformed key a 400. Keys belong to a user, live in the database (so they hold across a restart)
 * and last 24 hours. Runs on both engines.
 */
import { describe, expect, it } from 'vitest';

import { BODY_LIMIT_BYTES, IDEMPOTENCY_KEYS_PER_USER, kib, UNKNOWN_FIELDS_NAMED } from '@/shared/limits';

import { expectError, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { expectTrpcError, trpcRequest } from '@test-support/trpc-client';
import { type ApiResponse, rawRequest } from '@test-support/http-client';
import { startServer } from '@test-support/server-process';

// A burst large enough for the 50 parallel retries below.
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
const nextId = idSource(80_000n);
let keyNumber = 0;
const newKey = () => `key-${Date.now()}-${++keyNumber}`;

const create = (body: string, key: string | undefined, token = server.adminToken) =>
  server.client(token).post('/api/plants', body, key === undefined ? {} : { headers: { 'Idempotency-Key': key } });

const replayed = (response: ApiResponse) => response.headers.get('idempotent-replayed');

async function keysKept(key: string): Promise<number> {
  const rows = await server.database.query<{ count: bigint }>('SELECT COUNT(*) AS count FROM "IdempotencyKey" WHERE "key" = ?', [key]);
  return Number(rows[0]!.count);
}

async function countPlants(id: bigint): Promise<number> {
  const rows = await server.database.query<{ count: bigint }>('SELECT COUNT(*) AS count FROM "Plant" WHERE "id" = ?', [id]);
  return Number(rows[0]!.count);
}

describe('Idempotency-Key on create', () => {
  it('replays the first answer to a retry with the same body, marked Idempotent-Replayed, and creates once', async () => {
    const id = nextId();
    const key = newKey();
    const first = await create(plantBody(id, 'Monstera', 'tropical'), key);
    expectStatus(first, 200);
    expect(replayed(first)).toBeNull();
    for (let retry = 0; retry < 3; retry++) {
      const again = await create(plantBody(id, 'Monstera', 'tropical'), key);
      expectStatus(again, 200);
      expect(replayed(again)).toBe('true');
      expect(again.text).toBe(first.text);
    }
    expect(await countPlants(id)).toBe(1);
    // Without the key, the same body is a new request, and the id is taken.
    expectError(await create(plantBody(id, 'Monstera', 'tropical'), undefined), 'plantIdTaken');
  });

  it('counts bodies that differ only in member order, white space or string escapes as the same', async () => {
    const id = nextId();
    const key = newKey();
    expectStatus(await create(`{"id":${id},"name":"Fern","tag":"shade"}`, key), 200);
    for (const variant of [`{ "tag" : "shade", "name" : "Fern", "id" : ${id} }`, `{"id":${id},"name":"\\u0046ern","tag":"sh\\u0061de"}`]) {
      const again = await create(variant, key);
      expectStatus(again, 200);
      expect(replayed(again), variant).toBe('true');
    }
    expect(await countPlants(id)).toBe(1);
  });

  it('does not replay the 200 of an id to the same number written with a fraction or an exponent, which is a 400', async () => {
    const id = nextId();
    const key = newKey();
    expectStatus(await create(`{"id":${id},"name":"Fern"}`, key), 200);
    for (const variant of [`{"id":${id}.0,"name":"Fern"}`, `{"id":${id}e0,"name":"Fern"}`]) {
      expectError(await create(variant, newKey()), 'wrongType', 'id must be an integer');
      expectError(await create(variant, key), 'idempotencyKeyReused');
    }
  });

  it('answers 422 to the same key with a different body, and changes nothing', async () => {
    const id = nextId();
    const key = newKey();
    expectStatus(await create(plantBody(id, 'Cactus'), key), 200);
    for (const other of [plantBody(id, 'Cactus', 'desert'), plantBody(id, 'cactus'), plantBody(nextId(), 'Cactus'), `{"id":${id},"name":"Cactus","extra":1}`]) {
      expectError(await create(other, key), 'idempotencyKeyReused', 'different body');
    }
    const listed = await server.admin.get(`/api/plants?after=${id - 1n}&limit=1`);
    expect(listed.json).toEqual([{ id, name: 'Cactus' }]);
  });

  it('replays the refusal of an operation that ran (the id was taken): the answer kept is the one the first request got', async () => {
    const id = nextId();
    expectStatus(await create(plantBody(id, 'First'), undefined), 200);
    const key = newKey();
    expectError(await create(plantBody(id, 'Second'), key), 'plantIdTaken');
    const again = await create(plantBody(id, 'Second'), key);
    expectError(again, 'plantIdTaken');
    expect(replayed(again)).toBe('true');
  });

  it('keeps nothing for a body its validation refuses (as Stripe does): a retry is checked again, and the key stays free', async () => {
    const id = nextId();
    const key = newKey();
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await create(`{"id": ${id}, "name": ""}`, key);
      expectError(refused, 'invalidValue');
      expect(replayed(refused)).toBeNull();
    }
    expect(await keysKept(key)).toBe(0);
    // The corrected body is a new request under the same key, not a 422.
    expectStatus(await create(plantBody(id, 'Corrected'), key), 200);
    expect(replayed(await create(plantBody(id, 'Corrected'), key))).toBe('true');
  });

  it('keeps keys per user: the same key from two users is two keys', async () => {
    const [alice, bob] = [await server.createToken('idem-alice'), await server.createToken('idem-bob')];
    const key = newKey();
    const [a, b] = [nextId(), nextId()];
    expectStatus(await create(plantBody(a, 'Alice’s'), key, alice.token), 200);
    const bobs = await create(plantBody(b, 'Bob’s'), key, bob.token);
    expectStatus(bobs, 200);
    expect(replayed(bobs)).toBeNull();
    expect(bobs.json).toEqual({ id: b, name: 'Bob’s' });
    // Alice's key does not reveal Bob's answer, nor Bob's hers.
    expectError(await create(plantBody(b, 'Bob’s'), key, alice.token), 'idempotencyKeyReused');
  });

  it('refuses a malformed key with 400 before anything is created', async () => {
    const id = nextId();
    for (const key of ['x'.repeat(256), 'tab\there', 'caf\u00e9']) {
      expectError(await create(plantBody(id, 'Never'), key), 'idempotencyKeyInvalid', 'Idempotency-Key');
    }
    expectStatus(await create(plantBody(nextId(), 'Longest key'), 'k'.repeat(255)), 200);
    const twice = await rawRequest(server.baseUrl, {
      method: 'POST',
      path: '/api/plants',
      headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json', 'Idempotency-Key': ['a', 'b'] as unknown as string },
      chunks: [Buffer.from(plantBody(id, 'Never'))],
    });
    expectError(twice, 'idempotencyKeyInvalid', 'once');
    const empty = await rawRequest(server.baseUrl, {
      method: 'POST',
      path: '/api/plants',
      headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json', 'Idempotency-Key': '' },
      chunks: [Buffer.from(plantBody(id, 'Never'))],
    });
    expectError(empty, 'idempotencyKeyInvalid');
    expect(await countPlants(id)).toBe(0);
  });

  it('answers 50 parallel retries of one key with one create; every other answer is a replay or 409', async () => {
    const id = nextId();
    const key = newKey();
    const body = plantBody(id, 'Raced', 'parallel');
    // Each on a connection of its own (node:http without an agent), all sent at once.
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        rawRequest(server.baseUrl, {
          method: 'POST',
          path: '/api/plants',
          headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
          chunks: [Buffer.from(body)],
        }),
      ),
    );
    const originals = answers.filter((answer) => answer.status === 200 && replayed(answer) === null);
    const replays = answers.filter((answer) => answer.status === 200 && replayed(answer) === 'true');
    const inFlight = answers.filter((answer) => answer.status === 409);
    expect(originals, answers.map((answer) => answer.status).join(' ')).toHaveLength(1);
    expect(replays.length + inFlight.length).toBe(49);
    for (const answer of inFlight) {
      expectError(answer, 'idempotencyKeyInFlight');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    for (const answer of replays) expect(answer.text).toBe(originals[0]!.text);
    expect(await countPlants(id)).toBe(1);
    console.log(`[idempotency] 50 parallel requests with one key: 1 create, ${replays.length} replays, ${inFlight.length} × 409`);
  });

  it('answers 409 while the key is held, and takes over a key whose request died (its lease ran out)', async () => {
    const id = nextId();
    const key = newKey();
    const [admin] = await server.database.query<{ id: bigint }>(`SELECT "id" FROM "User" WHERE "name" = 'admin'`);
    const userId = admin!.id;
    // A request in flight, as another instance holding the key would leave it.
    const inAMinute = await server.database.dateTime(new Date(Date.now() + 60_000));
    const expires = await server.database.dateTime(new Date(Date.now() + 86_400_000));
    const { requestFingerprint } = await import('@/server/idempotency/fingerprint');
    const fingerprint = requestFingerprint('POST /plants', { id, name: 'Held' });
    await server.database.execute(
      'INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "lockedUntil", "expiresAt") VALUES (?, ?, ?, ?, ?)',
      [userId, key, fingerprint, inAMinute, expires],
    );
    expectError(await create(plantBody(id, 'Held'), key), 'idempotencyKeyInFlight', 'still being carried out');
    expectError(await create(plantBody(id, 'Other'), key), 'idempotencyKeyReused');
    // The holder died: once its lease is over, a retry carries the request out.
    await server.database.execute('UPDATE "IdempotencyKey" SET "lockedUntil" = ? WHERE "key" = ?', [await server.database.dateTime(new Date(Date.now() - 1_000)), key]);
    const taken = await create(plantBody(id, 'Held'), key);
    expectStatus(taken, 200);
    expect(replayed(taken)).toBeNull();
    expect(replayed(await create(plantBody(id, 'Held'), key))).toBe('true');
  });

  it('forgets a key after 24 hours: the same request is carried out anew', async () => {
    const id = nextId();
    const key = newKey();
    expectStatus(await create(plantBody(id, 'Aged'), key), 200);
    await server.database.execute('UPDATE "IdempotencyKey" SET "expiresAt" = ? WHERE "key" = ?', [await server.database.dateTime(new Date(Date.now() - 1_000)), key]);
    const again = await create(plantBody(id, 'Aged'), key);
    expectError(again, 'plantIdTaken');
    expect(replayed(again)).toBeNull();
  });

  it('keeps keys in the database: another instance on it, or the same one restarted, replays them', async () => {
    const id = nextId();
    const key = newKey();
    const first = await create(plantBody(id, 'Durable'), key);
    expectStatus(first, 200);
    const second = await startServer({ database: server.database, env: { RATE_LIMIT_PER_TOKEN: 'off' } });
    try {
      const again = await server.client(server.adminToken).post(`${second.baseUrl}/api/plants`, plantBody(id, 'Durable'), { headers: { 'Idempotency-Key': key } });
      expectStatus(again, 200);
      expect(replayed(again)).toBe('true');
      expect(again.text).toBe(first.text);
    } finally {
      await second.stop();
    }
  });
});

describe('what keys cost the server', () => {
  /** A create body just under `size` bytes: id, name, then unknown fields (~6,500 of them in 64 KiB). */
  function unknownFieldsBody(id: string, size: number): { body: string; fields: number } {
    let body = `{"id":${id},"name":"x"`;
    let fields = 0;
    while (body.length < size - 16) body += `,"f${fields++}":0`;
    return { body: `${body}}`, fields };
  }

  it(`answers ${kib(BODY_LIMIT_BYTES)} of unknown fields with a short message on both doors, and keeps nothing under a new key each time`, async () => {
    const { token } = await server.createToken('idem-unknown');
    const { body, fields } = unknownFieldsBody(String(nextId()), BODY_LIMIT_BYTES);
    const keys = Array.from({ length: 8 }, () => newKey());
    for (const key of keys) {
      const response = await create(body, key, token);
      const named = Array.from({ length: UNKNOWN_FIELDS_NAMED }, (_, index) => `"f${index}"`).join(', ');
      expectError(response, 'unknownField', `unknown fields ${named} and ${(fields - UNKNOWN_FIELDS_NAMED).toLocaleString('en-US')} more`);
      expect(response.text.length).toBeLessThan(300);
    }
    const [kept] = await server.database.query<{ count: bigint }>(
      `SELECT COUNT(*) AS count FROM "IdempotencyKey" WHERE "key" IN (${keys.map(() => '?').join(',')})`,
      keys,
    );
    expect(kept!.count).toBe(0n);
    const trpcBody = `{"json":${unknownFieldsBody('"1"', BODY_LIMIT_BYTES - 64).body},"meta":{"values":{"id":["bigint"]}}}`;
    const viaTrpc = await trpcRequest(server.baseUrl, 'plants.create', { token, body: trpcBody });
    const error = await expectTrpcError(viaTrpc, 'unknownField', 'and ');
    expect(error.message.length).toBeLessThan(300);
  });

  it(`keeps at most ${IDEMPOTENCY_KEYS_PER_USER.toLocaleString('en-US')} keys per user: a new key evicts that user's oldest answered one`, { timeout: 60_000 }, async () => {
    const { token } = await server.createToken('idem-bound');
    const [user] = await server.database.query<{ id: bigint }>(`SELECT "id" FROM "User" WHERE "name" = 'idem-bound'`);
    // As the engine stores a DateTime, for rows written behind the app's back.
    const epoch = await server.database.dateTime(new Date(0));
    const stored = (at: Date) => (typeof epoch === 'number' ? at.getTime() : at.toISOString().replace('Z', String(epoch).slice('1970-01-01T00:00:00.000'.length)));
    const start = Date.now() - 3 * 3_600_000;
    const expires = stored(new Date(Date.now() + 3_600_000));
    const ROWS = 500;
    for (let first = 0; first < IDEMPOTENCY_KEYS_PER_USER; first += ROWS) {
      const rows = Array.from({ length: ROWS }, (_, offset) => first + offset);
      await server.database.execute(
        `INSERT INTO "IdempotencyKey" ("userId", "key", "fingerprint", "status", "response", "lockedUntil", "createdAt", "expiresAt") VALUES ${rows.map(() => '(?, ?, ?, 200, ?, ?, ?, ?)').join(', ')}`,
        rows.flatMap((row) => [user!.id, `old-${row}`, 'f', '{}', stored(new Date(start)), stored(new Date(start + row * 1_000)), expires]),
      );
    }
    const count = async () => Number((await server.database.query<{ count: bigint }>('SELECT COUNT(*) AS count FROM "IdempotencyKey" WHERE "userId" = ?', [user!.id]))[0]!.count);
    expect(await count()).toBe(IDEMPOTENCY_KEYS_PER_USER);
    const id = nextId();
    expectStatus(await create(plantBody(id, 'Bounded'), 'new-1', token), 200);
    expect(await count()).toBe(IDEMPOTENCY_KEYS_PER_USER);
    expect(await keysKept('old-0')).toBe(0);
    expect(await keysKept('old-1')).toBe(1);
    expectStatus(await create(plantBody(nextId(), 'Bounded'), 'new-2', token), 200);
    expect(await keysKept('old-1')).toBe(0);
    expect(await count()).toBe(IDEMPOTENCY_KEYS_PER_USER);
    // The newest keys still replay.
    expect(replayed(await create(plantBody(id, 'Bounded'), 'new-1', token))).toBe('true');
  });
});
