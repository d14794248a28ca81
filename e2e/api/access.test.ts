/**
 * Members reach their own plants, admins every plant. A plant out of reach is answered exactly as a plant
 * that does not exist (404 on delete, absent from lists); only a create with its id tells that it is taken.
 * Reaching another's plant on purpose (every id spelling, method and door, "after", a taken id) is the BOLA
 * block of secrets.test.ts, written once there.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectStatus, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import type { ApiClient, ApiResponse } from '@test-support/http-client';

const server = setupServer();

let alice: ApiClient;
let bob: ApiClient;
let secondAdmin: ApiClient;

const ALICE_IDS = [10n, 30n, 50n];
const BOB_IDS = [20n, 40n];
const ADMIN_IDS = [60n];

const ids = (response: ApiResponse): bigint[] => response.json.map((plant: { id: bigint }) => plant.id);

async function listIds(client: ApiClient): Promise<bigint[]> {
  const response = await client.get('/api/plants?limit=1000');
  expectStatus(response, 200);
  return ids(response);
}

beforeAll(async () => {
  alice = server.client((await server.createToken('alice', 'member')).token);
  bob = server.client((await server.createToken('bob', 'member')).token);
  secondAdmin = server.client((await server.createToken('root', 'admin')).token);
  for (const id of ALICE_IDS) expectStatus(await alice.post('/api/plants', plantBody(id, `alice ${id}`, 'alice')), 200);
  for (const id of BOB_IDS) expectStatus(await bob.post('/api/plants', plantBody(id, `bob ${id}`)), 200);
  for (const id of ADMIN_IDS) expectStatus(await server.admin.post('/api/plants', plantBody(id, `admin ${id}`)), 200);
});

describe('members', () => {
  it('list only their own plants', async () => {
    expect(await listIds(alice)).toEqual(ALICE_IDS);
    expect(await listIds(bob)).toEqual(BOB_IDS);
  });

  it('page only through their own plants (limit=1 with next links)', async () => {
    const seen: bigint[] = [];
    let target: string | undefined = '/api/plants?limit=1';
    while (target) {
      const response: ApiResponse = await bob.get(target);
      expectStatus(response, 200);
      seen.push(...ids(response));
      const link = nextLink(response);
      target = link === undefined ? undefined : new URL(link, response.request.url).href;
      expect(seen.length).toBeLessThanOrEqual(BOB_IDS.length);
    }
    expect(seen).toEqual(BOB_IDS);
  });

  it('see a plant they created right away, and only they and admins see it', async () => {
    expectStatus(await alice.post('/api/plants', plantBody(70n, 'new')), 200);
    expect(await listIds(alice)).toContain(70n);
    expect(await listIds(bob)).not.toContain(70n);
    expect(await listIds(server.admin)).toContain(70n);
  });

  it('can delete their own plant', async () => {
    expectStatus(await alice.post('/api/plants', plantBody(80n, 'short-lived')), 200);
    expectStatus(await alice.delete('/api/plants/80'), 204);
    expect(await listIds(alice)).not.toContain(80n);
  });
});

describe('admins', () => {
  it('see every plant of every user', async () => {
    const all = await listIds(server.admin);
    for (const id of [...ALICE_IDS, ...BOB_IDS, ...ADMIN_IDS]) expect(all).toContain(id);
    expect(all).toEqual([...all].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('made with token create --role admin see every plant too', async () => {
    expect(await listIds(secondAdmin)).toEqual(await listIds(server.admin));
  });

  it("can delete a member's plant; it is gone for the member too", async () => {
    expectStatus(await server.admin.delete(`/api/plants/${BOB_IDS[0]}`), 204);
    expect(await listIds(bob)).not.toContain(BOB_IDS[0]);
    expect(await listIds(server.admin)).not.toContain(BOB_IDS[0]);
  });

  it("can delete another admin's plant", async () => {
    expectStatus(await secondAdmin.delete(`/api/plants/${ADMIN_IDS[0]}`), 204);
    expect(await listIds(server.admin)).not.toContain(ADMIN_IDS[0]);
  });
});
