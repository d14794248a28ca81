import { describe, expect, it } from 'vitest';

import http from 'node:http';

import { expectError, expectJsonContentType, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { expectTrpcError, trpcRequest } from '@test-support/trpc-client';
import { rawRequest } from '@test-support/http-client';

import { BODY_LIMIT_BYTES, kib } from '@/shared/limits';

const server = setupServer();
const nextId = idSource(1_000n);

/** A create body of 128 KiB in 16 KiB pieces, as a client streaming it without Content-Length sends it. */
function oversizeChunks(id: bigint): Uint8Array[] {
  const body = Buffer.from(plantBody(id, 'x'.repeat(128 * 1024)));
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < body.length; offset += 16 * 1024) chunks.push(body.subarray(offset, offset + 16 * 1024));
  return chunks;
}

const create = (body: string, options?: { contentType?: string | null }) => server.admin.post('/api/plants', body, options);

async function listAll(): Promise<{ id: bigint; name: string; tag?: string }[]> {
  const response = await server.admin.get('/api/plants?limit=1000');
  expectStatus(response, 200);
  return response.json;
}

describe('POST /api/plants: success', () => {
  it('answers 200 with the created plant {id, name, tag}', async () => {
    const id = nextId();
    const response = await create(plantBody(id, 'Monstera deliciosa', 'tropical'));
    expectStatus(response, 200);
    expectJsonContentType(response);
    expect(response.json).toEqual({ id, name: 'Monstera deliciosa', tag: 'tropical' });
    expect(Object.keys(response.json).sort()).toEqual(['id', 'name', 'tag']);
  });

  it('stores the plant: it appears in the list as it was created', async () => {
    const id = nextId();
    expectStatus(await create(plantBody(id, 'Ficus lyrata', 'indoor')), 200);
    expect((await listAll()).find((plant) => plant.id === id)).toEqual({ id, name: 'Ficus lyrata', tag: 'indoor' });
  });

  it('omits tag (no null, no "") when the plant has none, in the create answer and in the list', async () => {
    const id = nextId();
    const response = await create(plantBody(id, 'Pilea'));
    expectStatus(response, 200);
    expect(response.json).toEqual({ id, name: 'Pilea' });
    expect(Object.keys(response.json).sort()).toEqual(['id', 'name']);
    expect(response.text).not.toContain('tag');
    const listed = (await listAll()).find((plant) => plant.id === id);
    expect(listed).toEqual({ id, name: 'Pilea' });
    expect(Object.keys(listed!)).not.toContain('tag');
  });

  it('accepts a name of exactly 200 characters', async () => {
    const id = nextId();
    const name = 'n'.repeat(200);
    const response = await create(plantBody(id, name));
    expectStatus(response, 200);
    expect(response.json.name).toBe(name);
  });

  it('counts length in code points: a name of 200 emoji (400 UTF-16 units) is accepted and kept exactly', async () => {
    const id = nextId();
    const name = '🌵'.repeat(200);
    const response = await create(plantBody(id, name));
    expectStatus(response, 200);
    expect(response.json.name).toBe(name);
    expect((await listAll()).find((plant) => plant.id === id)?.name).toBe(name);
  });

  it('accepts a tag of exactly 100 characters, and 100 emoji', async () => {
    expectStatus(await create(plantBody(nextId(), 'Tagged', 't'.repeat(100))), 200);
    expectStatus(await create(plantBody(nextId(), 'Tagged', '🌿'.repeat(100))), 200);
  });

  it('accepts non-ASCII text and JSON escapes as the same characters', async () => {
    const id = nextId();
    const response = await create(`{"id": ${id}, "name": "Gr\\u00fcnlilie \\"Spider\\"", "tag": "日本"}`);
    expectStatus(response, 200);
    expect(response.json).toEqual({ id, name: 'Grünlilie "Spider"', tag: '日本' });
  });

  it('accepts Content-Type: application/json; charset=utf-8', async () => {
    expectStatus(await create(plantBody(nextId(), 'Charset'), { contentType: 'application/json; charset=utf-8' }), 200);
  });

  it('treats the media type case-insensitively (Application/JSON)', async () => {
    expectStatus(await create(plantBody(nextId(), 'Case'), { contentType: 'Application/JSON' }), 200);
  });

  it(`accepts a body of exactly ${kib(BODY_LIMIT_BYTES)}`, async () => {
    const id = nextId();
    const json = plantBody(id, 'Big but allowed');
    const body = json.slice(0, -1) + ' '.repeat(BODY_LIMIT_BYTES - Buffer.byteLength(json)) + '}';
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT_BYTES);
    expectStatus(await create(body), 200);
  });
});

describe('POST /api/plants: unknown fields (40005)', () => {
  it.each([
    ['owner', '{"id": ID, "name": "x", "owner": 1}'],
    ['ownerId', '{"id": ID, "name": "x", "ownerId": 1}'],
    ['createdAt', '{"id": ID, "name": "x", "createdAt": "2020-01-01T00:00:00Z"}'],
    ['__proto__', '{"id": ID, "name": "x", "__proto__": {"tag": "sneaky"}}'],
  ])('rejects the unknown field %s with 400, error 40005 and a message naming it', async (field, template) => {
    const id = nextId();
    expectError(await create(template.replace('ID', String(id))), 'unknownField', field);
  });

  it('stores nothing when a body has an unknown field', async () => {
    const id = nextId();
    expectError(await create(`{"id": ${id}, "name": "x", "ownerId": 1}`), 'unknownField');
    expect((await listAll()).some((plant) => plant.id === id)).toBe(false);
  });
});

describe('POST /api/plants: missing fields (40002)', () => {
  it('rejects a body without id, naming id', async () => {
    expectError(await create('{"name": "No id"}'), 'missingField', 'id');
  });

  it('rejects a body without name, naming name', async () => {
    expectError(await create(`{"id": ${nextId()}}`), 'missingField', 'name');
  });

  it('rejects an empty object with 40002', async () => {
    expectError(await create('{}'), 'missingField');
  });
});

describe('POST /api/plants: wrong JSON types (40003)', () => {
  it.each([
    ['id as a string', '{"id": "7", "name": "x"}', 'id'],
    ['id as a boolean', '{"id": true, "name": "x"}', 'id'],
    ['id as a fraction', '{"id": 1.5, "name": "x"}', 'id'],
    ['id as null', '{"id": null, "name": "x"}', 'id'],
    ['id as an array', '{"id": [7], "name": "x"}', 'id'],
    ['name as a number', '{"id": 9001, "name": 5}', 'name'],
    ['name as an object', '{"id": 9002, "name": {"latin": "x"}}', 'name'],
    ['tag as null', '{"id": 9003, "name": "x", "tag": null}', 'tag'],
    ['tag as a number', '{"id": 9004, "name": "x", "tag": 3}', 'tag'],
  ])('rejects %s with 400, error 40003 naming the field', async (_, body, field) => {
    expectError(await create(body), 'wrongType', field);
  });

  it('does not coerce "7" into the id 7: nothing is stored', async () => {
    expectError(await create('{"id": "9005", "name": "x"}'), 'wrongType');
    expect((await listAll()).some((plant) => plant.id === 9005n)).toBe(false);
  });
});

describe('POST /api/plants: values out of range or breaking a rule (40004)', () => {
  it.each([
    ['an empty name', '""', 'name'],
    ['a name of 201 characters', JSON.stringify('n'.repeat(201)), 'name'],
    ['a name of 201 emoji', JSON.stringify('🌵'.repeat(201)), 'name'],
    ['a name of only spaces', '"    "', 'name'],
    ['a name of only non-ASCII white space', '"\\u2003\\u00a0"', 'name'],
    ['a name with a line feed', '"a\\nb"', 'name'],
    ['a name with a BEL (\\u0007)', '"a\\u0007b"', 'name'],
    ['a name with a tab', '"a\\tb"', 'name'],
    ['a name with DEL (\\u007f)', '"a\\u007fb"', 'name'],
    ['a name with a C1 control (\\u0085)', '"a\\u0085b"', 'name'],
  ])('rejects %s with 400, error 40004 naming the field', async (_, name, field) => {
    expectError(await create(`{"id": ${nextId()}, "name": ${name}}`), 'invalidValue', field);
  });

  it('says "name must be at most 200 characters" for a long name', async () => {
    expectError(await create(plantBody(nextId(), 'n'.repeat(201))), 'invalidValue', 'name must be at most 200 characters');
  });

  it.each([
    ['an empty tag', '""'],
    ['a tag of 101 characters', JSON.stringify('t'.repeat(101))],
    ['a tag with a line feed', '"a\\nb"'],
    ['a tag with a BEL', '"a\\u0007"'],
  ])('rejects %s with 400, error 40004 naming tag', async (_, tag) => {
    expectError(await create(`{"id": ${nextId()}, "name": "x", "tag": ${tag}}`), 'invalidValue', 'tag');
  });

  it.each([
    ['9223372036854775808 (int64 max + 1)', '9223372036854775808'],
    ['-9223372036854775809 (int64 min - 1)', '-9223372036854775809'],
    ['a 30-digit id', '123456789012345678901234567890'],
  ])('rejects the id %s with 400, error 40004 naming id', async (_, id) => {
    expectError(await create(`{"id": ${id}, "name": "x"}`), 'invalidValue', 'id');
  });

  it('stores nothing when a value breaks a rule', async () => {
    const id = nextId();
    expectError(await create(plantBody(id, 'n'.repeat(201))), 'invalidValue');
    expect((await listAll()).some((plant) => plant.id === id)).toBe(false);
  });
});

describe('names and tags without a visible character, on both doors (40004)', () => {
  // Lone combining marks, an enclosing circle, noncharacters (BMP and plane 16), and a mix with white space.
  const invisible = ['\u0301\u0301', '\u20dd', '\uffff', '\ufdd0', '\u{10ffff}', ' \u0301\ufffe '];
  const superjson = (input: Record<string, unknown>) => JSON.stringify({ json: input, meta: { values: { id: ['bigint'] } } });

  it.each(invisible.map((text) => [JSON.stringify(text).slice(1, -1).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`), text]))(
    'refuses %s as a name and as a tag, on REST (create and patch) and tRPC (create and update)',
    async (_, text) => {
      const id = nextId();
      expectError(await create(`{"id": ${id}, "name": ${JSON.stringify(text)}}`), 'invalidValue', 'name must have at least one visible character');
      expectError(await create(`{"id": ${id}, "name": "x", "tag": ${JSON.stringify(text)}}`), 'invalidValue', 'tag must have at least one visible character');
      expectStatus(await create(plantBody(id, 'Visible')), 200);
      const patch = await server.admin.request('PATCH', `/api/plants/${id}`, { body: JSON.stringify({ name: text }), contentType: 'application/merge-patch+json' });
      expectError(patch, 'invalidValue', 'name');
      for (const input of [{ id: String(nextId()), name: text }, { id: String(nextId()), name: 'x', tag: text }]) {
        const refused = await trpcRequest(server.baseUrl, 'plants.create', { token: server.adminToken, body: superjson(input) });
        await expectTrpcError(refused, 'invalidValue', 'must have at least one visible character');
      }
      const update = await trpcRequest(server.baseUrl, 'plants.update', { token: server.adminToken, body: superjson({ id: String(id), name: text }) });
      await expectTrpcError(update, 'invalidValue', 'name must have at least one visible character');
    },
  );

  it('takes combining marks and noncharacters beside a visible character', async () => {
    for (const name of ['e\u0301', 'Fern\u20dd', 'Fern\ufdd0']) {
      const created = await create(plantBody(nextId(), name));
      expectStatus(created, 200);
      expect(created.json.name).toBe(name);
    }
  });
});

describe('POST /api/plants: bodies that are not a JSON object', () => {
  it.each([
    ['invalid JSON', '{"id": 1, "name": '],
    ['a trailing comma', '{"id": 1, "name": "x",}'],
    ['single quotes', "{'id': 1, 'name': 'x'}"],
    ['two JSON values', '{"id": 1, "name": "x"} {}'],
    ['an empty body', ''],
    ['a body of white space', '   \n'],
  ])('rejects %s with 400, error 40000', async (_, body) => {
    expectError(await create(body), 'invalidJson');
  });

  it('rejects a body that is not valid UTF-8 with 40000', async () => {
    const body = Buffer.concat([Buffer.from('{"id": 1, "name": "'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    expectError(await server.admin.post('/api/plants', new Uint8Array(body)), 'invalidJson');
  });

  it('rejects a body with a duplicate key (different values) with 40000', async () => {
    expectError(await create(`{"id": ${nextId()}, "name": "a", "name": "b"}`), 'invalidJson');
  });

  it('rejects a body with a duplicate key even when both values are equal, with 40000', async () => {
    const id = nextId();
    expectError(await create(`{"id": ${id}, "id": ${id}, "name": "a"}`), 'invalidJson');
  });

  it.each([
    ['an array', '[]'],
    ['an array of a plant', '[{"id": 1, "name": "x"}]'],
    ['null', 'null'],
    ['a string', '"x"'],
    ['a number', '5'],
    ['a boolean', 'true'],
  ])('rejects %s with 400, error 40001', async (_, body) => {
    expectError(await create(body), 'bodyNotObject');
  });
});

describe('POST /api/plants: duplicate ids (40006)', () => {
  it('rejects an id that is taken with 400, error 40006 and "a plant with id N already exists"', async () => {
    const id = nextId();
    expectStatus(await create(plantBody(id, 'First')), 200);
    expectError(await create(plantBody(id, 'Second')), 'plantIdTaken', `a plant with id ${id} already exists`);
  });

  it('keeps the first plant unchanged when a second create with its id fails', async () => {
    const id = nextId();
    expectStatus(await create(plantBody(id, 'Original', 'keep')), 200);
    expectError(await create(plantBody(id, 'Impostor')), 'plantIdTaken');
    expect((await listAll()).filter((plant) => plant.id === id)).toEqual([{ id, name: 'Original', tag: 'keep' }]);
  });

  it('lets exactly one of 50 parallel creates of one id succeed; the other 49 get 40006 and none a 5xx', async () => {
    const id = nextId();
    const responses = await Promise.all(Array.from({ length: 50 }, (_, index) => create(plantBody(id, `Racer ${index}`))));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status >= 500), statuses.join(',')).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    const refused = responses.filter((response) => response.status !== 200);
    expect(refused).toHaveLength(49);
    for (const response of refused) expectError(response, 'plantIdTaken', `a plant with id ${id} already exists`);
    const winner = responses.find((response) => response.status === 200)!;
    expect((await listAll()).filter((plant) => plant.id === id)).toEqual([winner.json]);
  });
});

describe('POST /api/plants: media type (415) and size (413)', () => {
  it('rejects Content-Type: text/plain with 415, error 41500', async () => {
    expectError(await create(plantBody(nextId(), 'x'), { contentType: 'text/plain' }), 'unsupportedMediaType');
  });

  it('rejects a body without Content-Type with 415, error 41500', async () => {
    const response = await create(plantBody(nextId(), 'x'), { contentType: null });
    expect(response.request.body).toBeDefined();
    expectError(response, 'unsupportedMediaType');
  });

  it('rejects application/x-www-form-urlencoded with 415', async () => {
    expectError(await create('id=1&name=x', { contentType: 'application/x-www-form-urlencoded' }), 'unsupportedMediaType');
  });

  it(`rejects a body over ${kib(BODY_LIMIT_BYTES)} with 413, error 41300`, async () => {
    const id = nextId();
    const json = plantBody(id, 'Too big');
    const body = json.slice(0, -1) + ' '.repeat(BODY_LIMIT_BYTES + 1 - Buffer.byteLength(json)) + '}';
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT_BYTES + 1);
    expectError(await create(body), 'bodyTooLarge');
    expect((await listAll()).some((plant) => plant.id === id)).toBe(false);
  });

  it(`rejects a chunked body (no Content-Length) over ${kib(BODY_LIMIT_BYTES)} with 413, error 41300`, async () => {
    const response = await rawRequest(server.baseUrl, {
      method: 'POST',
      path: '/api/plants',
      headers: { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' },
      chunks: oversizeChunks(nextId()),
    });
    server.conformance.expectConforms(response);
    expectError(response, 'bodyTooLarge');
  });

  it('keeps the connection usable after a 413 on a chunked body (or closes it): the next request on it is answered', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const headers = { Authorization: `Bearer ${server.adminToken}`, 'Content-Type': 'application/json' };
      const refused = await rawRequest(server.baseUrl, { method: 'POST', path: '/api/plants', headers, chunks: oversizeChunks(nextId()), agent });
      expectError(refused, 'bodyTooLarge');
      const next = await rawRequest(server.baseUrl, { method: 'GET', path: '/api/plants?limit=1', headers, agent });
      server.conformance.expectConforms(next);
      expectStatus(next, 200);
    } finally {
      agent.destroy();
    }
  });

  it('answers a 1 MiB body with 413 too', async () => {
    const response = await create(`{"id": 1, "name": "${'x'.repeat(1024 * 1024)}"}`);
    expectError(response, 'bodyTooLarge');
  });
});
