import { describe, expect, it } from 'vitest';

import { expectError, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';

const server = setupServer();
const nextId = idSource(5_000n);

async function createPlant(id: bigint = nextId()): Promise<bigint> {
  expectStatus(await server.admin.post('/api/plants', plantBody(id, `to delete ${id}`)), 200);
  return id;
}

async function listedIds(): Promise<bigint[]> {
  const response = await server.admin.get('/api/plants?limit=1000');
  expectStatus(response, 200);
  return response.json.map((plant: { id: bigint }) => plant.id);
}

describe('DELETE /api/plants/{id}', () => {
  it('answers 204 with an empty body', async () => {
    const id = await createPlant();
    const response = await server.admin.delete(`/api/plants/${id}`);
    expectStatus(response, 204);
    expect(response.text).toBe('');
    expect(response.headers.get('content-length') ?? '0').toBe('0');
  });

  it('removes the plant from the list and leaves the others', async () => {
    const [keep, remove] = [await createPlant(), await createPlant()];
    expectStatus(await server.admin.delete(`/api/plants/${remove}`), 204);
    const ids = await listedIds();
    expect(ids).not.toContain(remove);
    expect(ids).toContain(keep);
  });

  it('answers a second delete of the same id with 404, error 40401', async () => {
    const id = await createPlant();
    expectStatus(await server.admin.delete(`/api/plants/${id}`), 204);
    expectError(await server.admin.delete(`/api/plants/${id}`), 'plantNotFound');
  });

  it('answers 404, error 40401 for an id that never existed', async () => {
    expectError(await server.admin.delete('/api/plants/987654321'), 'plantNotFound');
  });

  it('frees the id: a plant can be created again with a deleted id', async () => {
    const id = await createPlant();
    expectStatus(await server.admin.delete(`/api/plants/${id}`), 204);
    expectStatus(await server.admin.post('/api/plants', plantBody(id, 'reborn')), 200);
  });

  it('deletes a plant with a negative id', async () => {
    const id = await createPlant(-42n);
    expectStatus(await server.admin.delete(`/api/plants/${id}`), 204);
    expect(await listedIds()).not.toContain(id);
  });

  it('percent-decodes the path: DELETE /api/plants/%31 deletes plant 1', async () => {
    await createPlant(1n);
    expectStatus(await server.admin.delete('/api/plants/%31'), 204);
    expect(await listedIds()).not.toContain(1n);
  });

  it.each([
    ['abc', 'abc'],
    ['1.5', '1.5'],
    ['9223372036854775808 (int64 max + 1)', '9223372036854775808'],
    ['-9223372036854775809 (int64 min - 1)', '-9223372036854775809'],
    ['1e3', '1e3'],
    ['0x10', '0x10'],
    ['a space (%20)', '%20'],
    ['%31%2E5 (1.5 encoded)', '%31%2E5'],
  ])('rejects the id %s with 400, error 40008', async (_, segment) => {
    expectError(await server.admin.delete(`/api/plants/${segment}`), 'invalidPathParameter');
  });

  it('does not delete anything when the id is not an int64', async () => {
    await createPlant(15n);
    expectError(await server.admin.delete('/api/plants/1.5'), 'invalidPathParameter');
    expect(await listedIds()).toContain(15n);
  });
});
