/**
 * "Select all matching" bulk changes and the CSV export walk a name search of many matches as the admin page's
 * table does: each statement reads at most the engine's walk budget of the caller's plants (searchWalkBudget),
 * and the next one goes on from the row where it stopped. Here each member's matches all lie after more of their
 * plants than one statement may walk, so that one bulk call or one export batch would otherwise walk the member's
 * whole view (docs/performance.md, "Search at scale"). The result is the same, reached in more steps.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { ROWS_PER_UNIT, SEARCH_WALK_BUDGET, searchWalkBudget } from '@/shared/limits';
import type { BulkSelection } from '@/shared/plant-table';

import { expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import { insertPlantsOf } from '@test-support/database';
import { trpcCall, trpcData } from '@test-support/trpc-client';

// A burst that pays for everything a test here does and a refill too slow to matter: what a call was charged
// is what the bucket lost (the export test reads it).
const BURST = 60;
const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });

/** More plants before the matches than one statement may walk, on either engine. */
const FILLERS = SEARCH_WALK_BUDGET + 500;
const MATCHES = 30;
const MATCH_BASE = 100_000n;
const matchIds = Array.from({ length: MATCHES }, (_, index) => MATCH_BASE + BigInt(index));
let budget: number;
const tokens = { bulk: '', export: '' };

/** A member's plants, ids from `base` on: the fillers (names that sort first), then the matches of "zq". */
async function seed(owner: string, base: bigint) {
  await insertPlantsOf(server.database, owner, [
    ...Array.from({ length: FILLERS }, (_, index) => ({ id: base + BigInt(index + 1), name: `filler ${String(index + 1).padStart(6, '0')}` })),
    ...matchIds.map((id) => ({ id: base + id, name: `zq ${id}` })),
  ]);
}

/** Where the export member's plants start: ids are unique across the store. */
const EXPORT_BASE = 1_000_000n;

beforeAll(async () => {
  budget = searchWalkBudget(server.database.engine);
  tokens.bulk = (await server.createToken('walked-bulk', 'member')).token;
  tokens.export = (await server.createToken('walked-export', 'member')).token;
  await server.createToken('walked-other', 'member');
  await seed('walked-bulk', 0n);
  await seed('walked-export', EXPORT_BASE);
  // Another member's matches, more than either engine's index plan takes: "zq" is searched by the walk (two
  // characters: SQLite's probe of a phrase's first matches does not serve it).
  await insertPlantsOf(server.database, 'walked-other', Array.from({ length: 12_000 }, (_, index) => ({ id: 5_000_000n + BigInt(index), name: `zq other ${index}` })));
  if (server.database.engine === 'postgresql') await server.database.execute('ANALYZE "Plant"');
}, 300_000);

type Outcome = { done: bigint[]; gone: bigint[]; nextAfter: bigint | null };

async function deleteMatching(selection: BulkSelection): Promise<Outcome> {
  const answer = await trpcCall(server.baseUrl, 'mutation', 'plants.deleteMany', { token: tokens.bulk, input: { selection } });
  expect(answer.status, answer.text).toBe(200);
  return trpcData<Outcome>(answer);
}

describe('a bulk delete of every plant matching a search whose matches lie at the far end', () => {
  it('walks at most the budget a call, answers nextAfter where it stopped, and deletes exactly the matches by the end', async () => {
    // Unticked on the page, and created after the page was read: both stay.
    const unticked = matchIds[3]!;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const asOf = new Date();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const client = server.client(tokens.bulk);
    expectStatus(await client.post('/api/plants', plantBody(MATCH_BASE + 500n, 'zq added later')), 200);
    const selection: BulkSelection = { kind: 'matching', filters: { q: 'zq' }, asOf, except: [unticked] };

    // The first call's walk read the budget of fillers and found nothing: it says where it stopped.
    const first = await deleteMatching(selection);
    expect(first).toEqual({ done: [], gone: [], nextAfter: BigInt(budget) });
    // Going on as the admin page does (useBulk.ts), until nextAfter is null.
    const done = [...first.done];
    let after = first.nextAfter;
    for (let calls = 1; after !== null; calls++) {
      expect(calls, 'calls').toBeLessThan(10);
      const next = await deleteMatching({ ...selection, after });
      done.push(...next.done);
      after = next.nextAfter;
    }
    expect(done).toEqual(matchIds.filter((id) => id !== unticked));
    // Nothing else went: the fillers, the unticked match and the later one are all there.
    const left = (await client.get('/api/plants?q=zq&limit=100')).json as { id: bigint }[];
    expect(left.map((plant) => plant.id)).toEqual([unticked, MATCH_BASE + 500n]);
    const fillers = (await client.get(`/api/plants?limit=1000&after=${FILLERS - 1000}`)).json as { id: bigint }[];
    expect(fillers.at(-1)?.id).toBe(BigInt(FILLERS));
  });
});

describe('the CSV export of a search whose matches lie at the far end', () => {
  async function exportedIds(query: string): Promise<bigint[]> {
    const response = await fetch(`${server.baseUrl}/api/plants/export?${query}`, { headers: { authorization: `Bearer ${tokens.export}` } });
    expect(response.status).toBe(200);
    return (await response.text()).split('\r\n').slice(1, -1).map((line) => BigInt(line.split(',')[0]!));
  }

  it('walks at most the budget a batch and goes on from where it stopped: every match, in order, each batch charged', async () => {
    const expected = matchIds.map((id) => EXPORT_BASE + id);
    expect(await exportedIds('q=zq')).toEqual(expected);
    // By name the fillers sort first too ("filler …" before "zq …").
    expect(await exportedIds('q=zq&sort=name')).toEqual(expected);
    // What the two exports were charged: a unit each at the door and a batch's units per statement (plants/export.ts).
    // Read by spending what the bucket has left, a unit a list of one: each export's walk stopped once at the
    // budget and went on, two statements each (the first found nothing), where one statement walked the whole view.
    const client = server.rawClient(tokens.export);
    let left = 0;
    while ((await client.get('/api/plants?limit=1')).status === 200) left++;
    // A batch is EXPORT_BATCH (plants/export.ts, which this process does not load: it opens the database) rows.
    const batchUnits = 1_000 / ROWS_PER_UNIT;
    expect((BURST - 2 - left) / batchUnits).toBe(4);
  });
});
