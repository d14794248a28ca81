/**
 * Races: what parallel clients and parallel processes writing the same SQLite file must never see. The
 * store serialises writes (WAL, one writer, a 10 s busy timeout); these tests prove the promises that
 * rest on it: one winner per id, a list that matches exactly what was acknowledged, no SQLITE_BUSY, and a
 * token command that works beside a busy server.
 *
 * The per-token rate limit is off on this server: these tests measure the store under load, and the
 * limits have their own file (floods.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { expectError, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import { type ApiClient, type ApiResponse, describeExchange, rawRequest } from '@test-support/http-client';
import { type IssuedToken } from '@test-support/token-command';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', RATE_LIMIT_AUTH_FAILURES: 'off' } });

/** Text that must never reach a client or the log: SQLite's lock errors surfacing instead of queueing. */
const BUSY_TEXT = /SQLITE_BUSY|database is locked|SQLITE_LOCKED|busy_timeout/i;

type Plant = { id: bigint; name: string; tag?: string };

let memberA: IssuedToken;
let memberB: IssuedToken;

beforeAll(async () => {
  memberA = await server.createToken('race-a', 'member');
  memberB = await server.createToken('race-b', 'member');
});

/** Every plant `client` has access to, paged through with the Link header. */
async function listAllByLink(client: ApiClient, pageSize: number): Promise<Plant[]> {
  const plants: Plant[] = [];
  let next: string | undefined = `/api/plants?limit=${pageSize}`;
  for (let pages = 0; next !== undefined; pages++) {
    expect(pages, 'pages followed (a Link loop?)').toBeLessThan(10_000);
    const response: ApiResponse = await client.get(next);
    expect(response.status, describeExchange(response)).toBe(200);
    expect(response.json.length, 'page length').toBeLessThanOrEqual(pageSize);
    plants.push(...(response.json as Plant[]));
    next = nextLink(response);
  }
  return plants;
}

function expectNoBusyText(texts: string[], where: string): void {
  const hits = texts.filter((text) => BUSY_TEXT.test(text));
  expect(hits.slice(0, 3), `${where} mentions SQLITE_BUSY or a locked database`).toEqual([]);
}

/** Runs `work` on `concurrency` loops until it has been called `total` times (however long the machine takes). */
async function runPool(total: number, concurrency: number, work: (index: number) => Promise<void>): Promise<number> {
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) await work(started++);
    }),
  );
  return started;
}

describe('parallel creates of one id', () => {
  it('over 100 separate connections at once: exactly one 200, 99 × 400 with error 40006, never a 5xx', { timeout: 180_000 }, async () => {
    // Three rounds: the admin alone, then admin and two members racing for the same id.
    const rounds: { id: bigint; tokens: string[] }[] = [
      { id: 5_000_001n, tokens: [server.adminToken] },
      { id: 5_000_002n, tokens: [server.adminToken, memberA.token, memberB.token] },
      { id: -9_223_372_036_854_775_808n, tokens: [memberA.token, memberB.token] },
    ];
    for (const { id, tokens } of rounds) {
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, index) =>
          rawRequest(server.baseUrl, {
            method: 'POST',
            path: '/api/plants',
            headers: { Authorization: `Bearer ${tokens[index % tokens.length]}`, 'Content-Type': 'application/json', Connection: 'close' },
            chunks: [Buffer.from(plantBody(id, `racer ${index}`))],
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status >= 500), `5xx among ${statuses.join(',')}`).toEqual([]);
      const winners = responses.filter((response) => response.status === 200);
      expect(winners, `200s for id ${id}`).toHaveLength(1);
      for (const response of responses.filter((candidate) => candidate.status !== 200)) {
        expectError(response, 'plantIdTaken', `a plant with id ${id} already exists`);
      }
      expectNoBusyText(responses.map((response) => response.text), 'a response');
      const stored = (await listAllByLink(server.admin, 1000)).filter((plant) => plant.id === id);
      expect(stored, 'the stored plant is the one answered 200').toEqual([winners[0]!.json]);
    }
  });
});

describe('a parallel mix of creates, deletes and lists', () => {
  it('stays consistent: the final list is exactly the ids created (200) minus those deleted (204)', { timeout: 180_000 }, async () => {
    const clients: { name: string; client: ApiClient }[] = [
      { name: 'admin', client: server.client(server.adminToken) },
      { name: 'race-a', client: server.client(memberA.token) },
      { name: 'race-b', client: server.client(memberB.token) },
    ];
    // A small id space so creates collide with creates and deletes with deletes.
    const ID_BASE = 7_000_000n;
    const ID_SPACE = 48;
    const created = new Map<bigint, number>();
    const deleted = new Map<bigint, number>();
    const createdBy = new Map<string, Set<bigint>>(clients.map(({ name }) => [name, new Set<bigint>()]));
    const statusCounts = new Map<string, number>();
    const problems: string[] = [];
    const texts: string[] = [];
    const count = (map: Map<bigint, number>, id: bigint) => map.set(id, (map.get(id) ?? 0) + 1);
    // A fixed pseudo-random sequence, so a failure can be replayed.
    let seed = 0x2545f491;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) / 2 ** 32);

    const startedAt = Date.now();
    const fired = await runPool(600, 24, async (index) => {
      const { name, client } = clients[Math.floor(random() * clients.length)]!;
      const id = ID_BASE + BigInt(Math.floor(random() * ID_SPACE));
      const roll = random();
      let response: ApiResponse;
      let operation: string;
      if (roll < 0.45) {
        operation = 'create';
        response = await client.post('/api/plants', plantBody(id, `mix ${index}`, name));
        if (response.status === 200) {
          count(created, id);
          createdBy.get(name)!.add(id);
          if (response.json?.id !== id) problems.push(`create answered another plant: ${describeExchange(response)}`);
        } else if (!(response.status === 400 && response.json?.error === 40006n)) {
          problems.push(`create: ${describeExchange(response)}`);
        }
      } else if (roll < 0.8) {
        operation = 'delete';
        response = await client.delete(`/api/plants/${id}`);
        if (response.status === 204) count(deleted, id);
        else if (!(response.status === 404 && response.json?.error === 40401n)) problems.push(`delete: ${describeExchange(response)}`);
      } else {
        operation = 'list';
        const after = ID_BASE + BigInt(Math.floor(random() * ID_SPACE)) - 1n;
        response = await client.get(`/api/plants?limit=${1 + Math.floor(random() * 20)}&after=${after}`);
        if (response.status !== 200) problems.push(`list: ${describeExchange(response)}`);
        else {
          const ids = (response.json as Plant[]).map((plant) => plant.id);
          const ascending = ids.every((value, position) => position === 0 || ids[position - 1]! < value);
          if (!ascending || ids.some((value) => value <= after)) problems.push(`list not ascending or not after ${after}: ${ids.join(',')}`);
        }
      }
      const key = `${operation} ${response.status}`;
      statusCounts.set(key, (statusCounts.get(key) ?? 0) + 1);
      texts.push(response.text);
    });
    const elapsedMs = Date.now() - startedAt;
    console.log(`[races] mix: ${fired} requests in ${elapsedMs} ms: ${[...statusCounts].map(([key, value]) => `${key}: ${value}`).join(', ')}`);

    expect(problems.slice(0, 5), 'unexpected answers').toEqual([]);
    expect([...statusCounts.keys()].filter((key) => / 5\d\d$/.test(key)), '5xx answers').toEqual([]);
    expectNoBusyText(texts, 'a response');

    // Per id, successful creates and deletes alternate: their difference is 0 or 1, and it is whether the id exists.
    const expected = new Set<bigint>();
    for (let offset = 0; offset < ID_SPACE; offset++) {
      const id = ID_BASE + BigInt(offset);
      const balance = (created.get(id) ?? 0) - (deleted.get(id) ?? 0);
      expect([0, 1], `id ${id}: ${created.get(id) ?? 0} creates answered 200, ${deleted.get(id) ?? 0} deletes answered 204`).toContain(balance);
      if (balance === 1) expected.add(id);
    }
    const listed = (await listAllByLink(server.admin, 7)).map((plant) => plant.id).filter((id) => id >= ID_BASE && id < ID_BASE + BigInt(ID_SPACE));
    expect(new Set(listed).size, 'the list repeats no id').toBe(listed.length);
    expect([...listed].sort((a, b) => (a < b ? -1 : 1)), 'the list (by Link) equals created minus deleted').toEqual(
      [...expected].sort((a, b) => (a < b ? -1 : 1)),
    );

    // Each member sees exactly a subset of what they created, and the two members never share a plant.
    const inMixRange = (id: bigint) => id >= ID_BASE && id < ID_BASE + BigInt(ID_SPACE);
    const seenByA = (await listAllByLink(server.client(memberA.token), 5)).map((plant) => plant.id).filter(inMixRange);
    const seenByB = (await listAllByLink(server.client(memberB.token), 5)).map((plant) => plant.id).filter(inMixRange);
    for (const id of seenByA) expect(createdBy.get('race-a')!.has(id), `race-a lists ${id}, which it never created`).toBe(true);
    for (const id of seenByB) expect(createdBy.get('race-b')!.has(id), `race-b lists ${id}, which it never created`).toBe(true);
    expect(seenByA.filter((id) => seenByB.includes(id)), 'plants both members see').toEqual([]);

    expectNoBusyText([server.log()], 'the server log');
    expect(server.log(), 'the server log has no request failure').not.toMatch(/"level":50|request failed/);
  });
});

describe('the token command (separate processes) while the server is under write load', () => {
  it('succeeds every time, and the new tokens work at once', { timeout: 180_000 }, async () => {
    const rounds = 2;
    // The tokens each round revokes, issued before the load starts.
    const toRevokeByRound: IssuedToken[][] = [];
    for (let round = 0; round < rounds; round++) {
      toRevokeByRound.push([await server.createToken(`revoke-me-${round}-a`), await server.createToken(`revoke-me-${round}-b`)]);
    }
    const writer = server.client(server.adminToken);
    let stop = false;
    let nextId = 9_000_000n;
    const loadStatuses = new Map<number, number>();
    const loadTexts: string[] = [];
    // Eight create loops, bounded in time, keep SQLite's writer lock busy while the commands write.
    const loadDeadline = Date.now() + 120_000;
    const load = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (!stop && Date.now() < loadDeadline) {
          const response = await writer.post('/api/plants', plantBody(nextId++, 'load'));
          loadStatuses.set(response.status, (loadStatuses.get(response.status) ?? 0) + 1);
          if (response.status !== 200) loadTexts.push(describeExchange(response));
        }
      }),
    );

    const issuedAll: IssuedToken[] = [];
    const revokedAll: IssuedToken[] = [];
    try {
      for (let round = 0; round < rounds; round++) {
        const toRevoke = toRevokeByRound[round]!;
        const before = [...loadStatuses.values()].reduce((sum, value) => sum + value, 0);
        const results = await Promise.allSettled([
          // Three processes create the same new user at once, three others different users (one an admin).
          server.createToken(`same-user-${round}`),
          server.createToken(`same-user-${round}`),
          server.createToken(`same-user-${round}`),
          server.createToken(`other-${round}-1`),
          server.createToken(`other-${round}-2`),
          server.createToken(`other-admin-${round}`, 'admin'),
          ...toRevoke.map((token) => server.revokeToken(token.id)),
        ]);
        const failures = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
        expect(
          failures.map((failure) => String(failure.reason).split('\n').slice(0, 12).join('\n')),
          `round ${round}: token commands that failed (of ${results.length})`,
        ).toEqual([]);
        const writesMeanwhile = [...loadStatuses.values()].reduce((sum, value) => sum + value, 0) - before;
        console.log(`[races] token round ${round}: 8 commands succeeded while the server answered ${writesMeanwhile} creates`);
        expect(writesMeanwhile, 'the load really ran beside the commands').toBeGreaterThan(0);
        issuedAll.push(...results.slice(0, 6).map((result) => (result as PromiseFulfilledResult<IssuedToken>).value));
        revokedAll.push(...toRevoke);
      }
    } finally {
      stop = true;
      await load;
    }

    expect(new Set(issuedAll.map((token) => token.token)).size, 'every token is new').toBe(issuedAll.length);
    for (const [index, issued] of issuedAll.entries()) {
      const client = server.client(issued.token);
      expect((await client.get('/api/plants?limit=1')).status, `token ${issued.id} lists`).toBe(200);
      const created = await client.post('/api/plants', plantBody(9_500_000n + BigInt(index), 'from a new token'));
      expect(created.status, describeExchange(created)).toBe(200);
    }
    for (const revoked of revokedAll) expectError(await server.client(revoked.token).get('/api/plants'), 'invalidToken');

    console.log(`[races] write load: ${[...loadStatuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`);
    expect(loadTexts.slice(0, 5), 'creates under load that were not 200').toEqual([]);
    expectNoBusyText([server.log()], 'the server log');
  });
});
