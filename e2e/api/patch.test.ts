/**
 * PATCH /api/plants/{id} (document version 1.1.0): a JSON merge patch of name and tag, over real HTTP, on
 * the REST door and the tRPC door alike. Every response is checked against the served OpenAPI document.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { errorCatalog } from '@/shared/errors';
import { expectError, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { trpcCall, trpcData } from '@test-support/trpc-client';

const server = setupServer();
const nextId = idSource(50_000n);
const MERGE_PATCH = 'application/merge-patch+json';

let member: { token: string };
let other: { token: string };

beforeAll(async () => {
  member = await server.createToken('patch-member', 'member');
  other = await server.createToken('patch-other', 'member');
});

async function created(token: string, name = 'Fern', tag?: string): Promise<bigint> {
  const id = nextId();
  expectStatus(await server.client(token).post('/api/plants', plantBody(id, name, tag)), 200);
  return id;
}

const patch = (token: string, id: bigint | string, body: string, contentType: string | null = MERGE_PATCH) =>
  server.client(token).request('PATCH', `/api/plants/${id}`, { body, contentType });

describe('PATCH /api/plants/{id}', () => {
  it('renames, re-tags and removes the tag, answering the plant as stored', async () => {
    const id = await created(member.token, 'Fern', 'shade');
    const renamed = await patch(member.token, id, '{"name": "Boston fern"}');
    expectStatus(renamed, 200);
    expect(renamed.json).toEqual({ id, name: 'Boston fern', tag: 'shade' });
    expect((await patch(member.token, id, '{"tag": "indoor"}', 'application/json')).json).toEqual({ id, name: 'Boston fern', tag: 'indoor' });
    const untagged = await patch(member.token, id, '{"tag": null}');
    expect(untagged.json).toEqual({ id, name: 'Boston fern' });
    expect(untagged.text).not.toContain('tag');
    const listed = await server.client(member.token).get(`/api/plants?after=${id - 1n}&limit=1`);
    expect(listed.json).toEqual([{ id, name: 'Boston fern' }]);
  });

  it('keeps int64 ids exact in the path and the answer', async () => {
    const id = 9_223_372_036_854_775_807n;
    await server.admin.delete(`/api/plants/${id}`);
    expectStatus(await server.admin.post('/api/plants', plantBody(id, 'max')), 200);
    const response = await patch(server.adminToken, id, '{"name": "still max"}');
    expect(response.text).toBe(`{"id":${id},"name":"still max"}`);
  });

  it('refuses an empty patch, the id, any other field and a bad value, naming each (400)', async () => {
    const id = await created(member.token);
    expectError(await patch(member.token, id, '{}'), 'emptyPatch', /changes nothing/);
    expectError(await patch(member.token, id, `{"id": ${id + 1n}, "name": "x"}`), 'unknownField', '"id"');
    expectError(await patch(member.token, id, '{"name": "x", "ownerId": 1}'), 'unknownField', '"ownerId"');
    expectError(await patch(member.token, id, '{"name": null}'), 'wrongType', 'name');
    expectError(await patch(member.token, id, '{"name": ""}'), 'invalidValue', 'name');
    expectError(await patch(member.token, id, '{"name": "\\u200b"}'), 'invalidValue', 'visible');
    expectError(await patch(member.token, id, `{"name": ${JSON.stringify('x'.repeat(201))}}`), 'invalidValue', '200');
    expectError(await patch(member.token, id, '{"tag": ""}'), 'invalidValue', 'tag');
    expectError(await patch(member.token, id, '{"tag": 7}'), 'wrongType', 'tag');
    expectError(await patch(member.token, id, '{"tag": "a\\u0007"}'), 'invalidValue', 'control');
    expectError(await patch(member.token, id, '{"name": "a", "name": "b"}'), 'invalidJson');
    expectError(await patch(member.token, id, '[]'), 'bodyNotObject');
    expectError(await patch(member.token, id, 'not json'), 'invalidJson');
    expectError(await patch(member.token, id, '{"name": "x"}', 'text/plain'), 'unsupportedMediaType', 'merge-patch');
    expectError(await patch(member.token, id, '{"name": "x"}', null), 'unsupportedMediaType');
    expectError(await patch(member.token, 'abc', '{"name": "x"}'), 'invalidPathParameter', 'id');
    expectError(await patch(member.token, '9223372036854775808', '{"name": "x"}'), 'invalidPathParameter', 'id');
    // Nothing changed through all of that.
    expect((await server.client(member.token).get(`/api/plants?after=${id - 1n}&limit=1`)).json).toEqual([{ id, name: 'Fern' }]);
  });

  it("answers another member's plant and a missing one alike (404), and lets an admin change any", async () => {
    const id = await created(member.token, 'Mine');
    const theirs = await patch(other.token, id, '{"name": "taken over"}');
    const missing = await patch(other.token, nextId(), '{"name": "nothing"}');
    expectError(theirs, 'plantNotFound');
    expectError(missing, 'plantNotFound');
    expect(theirs.json.message.replace(/\d+/, 'N')).toBe(missing.json.message.replace(/\d+/, 'N'));
    expectStatus(await patch(server.adminToken, id, '{"tag": "checked"}'), 200);
    expect((await server.client(member.token).get(`/api/plants?after=${id - 1n}&limit=1`)).json).toEqual([{ id, name: 'Mine', tag: 'checked' }]);
  });

  it('needs a token (401) before it reads the body', async () => {
    expectError(await server.anonymous.request('PATCH', '/api/plants/1', { body: 'not even json', contentType: MERGE_PATCH }), 'missingToken');
  });

  it('works the same on the tRPC door', async () => {
    const id = await created(member.token, 'Fern');
    const call = (input: unknown) => trpcCall(server.baseUrl, 'mutation', 'plants.update', { token: member.token, input });
    const ok = await call({ id, tag: 'trpc' });
    expect(ok.status).toBe(200);
    expect(trpcData(ok)).toEqual({ id, name: 'Fern', tag: 'trpc' });
    const empty = await call({ id });
    expect(empty.status).toBe(400);
    expect(empty.body.error.json.data.error).toBe(errorCatalog.emptyPatch.value);
    const invisible = await call({ id, name: '\u3164' });
    expect(invisible.status).toBe(400);
    expect(invisible.body.error.json.data.error).toBe(errorCatalog.invalidValue.value);
  });
});
