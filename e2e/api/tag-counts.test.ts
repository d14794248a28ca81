/**
 * The counts of plants per owner and tag that the tag filter's suggestions read (PlantTagCount), and per owner
 * (PlantOwnerCount), which the admin page's exact totals read, are kept by the database, in the statement that
 * changes a plant: through every door and write path of the app (create, patch, delete, the page's bulk delete and
 * re-tag, undo's restore, the CSV import) and through SQL written by another tool (an insert, a re-tag, a plant moved
 * to another owner, a delete of many; on PostgreSQL a TRUNCATE). After each, the tables equal a count of the plants
 * themselves, and the page's totals and places are exact past the count cap. Runs on both engines (the triggers are
 * SQL of each).
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { COUNT_CAP } from '@/shared/limits';
import { expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import { insertPlantsOf, testEngine } from '@test-support/database';
import { trpcCall, trpcData } from '@test-support/trpc-client';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
let member: string;
let other: string;

beforeAll(async () => {
  member = (await server.createToken('counts-member', 'member')).token;
  other = (await server.createToken('counts-other', 'member')).token;
});

type Count = { ownerId: bigint; tag: string; plants: bigint };
const sorted = (rows: Count[]) => rows.map((row) => `${row.ownerId} ${row.tag} ${row.plants}`).sort();

/** The kept counts beside the plants counted now: they must be equal, row for row (no zero left behind). */
async function expectCountsKept(when: string): Promise<void> {
  const kept = await server.database.query<Count>('SELECT "ownerId", tag, plants FROM "PlantTagCount"');
  const counted = await server.database.query<Count>(
    'SELECT "ownerId", tag, COUNT(*) AS plants FROM "Plant" WHERE tag IS NOT NULL GROUP BY "ownerId", tag',
  );
  expect(sorted(kept), `the counts ${when}`).toEqual(sorted(counted));
  type OwnerCount = { ownerId: bigint; plants: bigint };
  const owners = (rows: OwnerCount[]) => rows.map((row) => `${row.ownerId} ${row.plants}`).sort();
  // An owner whose last plant went keeps a row of 0: the same as no row.
  const keptOwners = await server.database.query<OwnerCount>('SELECT "ownerId", plants FROM "PlantOwnerCount" WHERE plants <> 0');
  const countedOwners = await server.database.query<OwnerCount>('SELECT "ownerId", COUNT(*) AS plants FROM "Plant" GROUP BY "ownerId"');
  expect(owners(keptOwners), `the owners' counts ${when}`).toEqual(owners(countedOwners));
}

const call = (token: string, path: string, input: unknown) => trpcCall(server.baseUrl, 'mutation', path, { token, input });
const suggestions = async (token: string, input: unknown) => trpcData<{ tag: string; count: number }[]>(await trpcCall(server.baseUrl, 'query', 'plants.tags', { token, input }));

describe('the counts per owner and tag', () => {
  it('follow every write path of the app', async () => {
    const rest = server.client(member);
    for (const [id, tag] of [
      [701n, 'fern'],
      [702n, 'fern'],
      [703n, 'Fern'],
      [704n, 'moss'],
      [705n, undefined],
    ] as const) {
      expectStatus(await rest.post('/api/plants', plantBody(id, `Counted ${id}`, tag)), 200);
    }
    expectStatus(await server.client(other).post('/api/plants', plantBody(706n, 'Other', 'fern')), 200);
    await expectCountsKept('after creates');

    expectStatus(await rest.request('PATCH', '/api/plants/701', { body: '{"tag": "moss"}', contentType: 'application/merge-patch+json' }), 200);
    expectStatus(await rest.request('PATCH', '/api/plants/705', { body: '{"tag": "new"}', contentType: 'application/merge-patch+json' }), 200);
    expectStatus(await rest.request('PATCH', '/api/plants/704', { body: '{"tag": null}', contentType: 'application/merge-patch+json' }), 200);
    expectStatus(await rest.request('PATCH', '/api/plants/703', { body: '{"name": "Renamed, same tag"}', contentType: 'application/merge-patch+json' }), 200);
    await expectCountsKept('after patches');

    expectStatus(await rest.delete('/api/plants/702'), 204);
    await expectCountsKept('after a delete');

    expect((await call(member, 'plants.retagMany', { selection: { kind: 'ids', ids: [701n, 703n, 705n] }, tag: 'bulk' })).status).toBe(200);
    await expectCountsKept('after a bulk re-tag');
    expect((await call(member, 'plants.deleteMany', { selection: { kind: 'ids', ids: [701n, 703n] }, keepForUndo: true })).status).toBe(200);
    await expectCountsKept('after a bulk delete kept for undo');
    expect((await call(member, 'plants.restore', { ids: [701n, 703n] })).status).toBe(200);
    await expectCountsKept('after a restore');

    const imports = server.client(member);
    const started = await imports.post('/api/plants/imports', '', { contentType: null });
    expectStatus(started, 200);
    const id = Number(started.json.id);
    const file = `id,name,tag\n701,Imported rename,moss\n${Array.from({ length: 40 }, (_, index) => `${900_000 + index},Imported ${index},imported`).join('\n')}\n`;
    expectStatus(await imports.request('PUT', `/api/plants/imports/${id}/parts/1`, { body: file, contentType: 'text/csv; charset=utf-8' }), 200);
    expectStatus(await imports.post(`/api/plants/imports/${id}/preview`, '', { contentType: null }), 200);
    expectStatus(await imports.post(`/api/plants/imports/${id}/apply`, '', { contentType: null }), 200);
    for (let tries = 0; (await imports.get(`/api/plants/imports/${id}`)).json.state !== 'done'; tries++) {
      expect(tries, 'the import is done').toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectCountsKept('after a CSV import');
  });

  it('follow SQL written by another tool: inserts, re-tags, a move to another owner, a delete of many', async () => {
    await insertPlantsOf(server.database, 'counts-member', [
      ...Array.from({ length: 300 }, (_, index) => ({ id: 800_000n + BigInt(index), name: `Imported ${index}`, tag: `t${index % 7}` })),
      { id: 801_000n, name: 'Untagged import' },
    ]);
    await expectCountsKept('after an insert of many');
    await server.database.execute(`UPDATE "Plant" SET tag = 'renamed' WHERE tag = 't3'`);
    await server.database.execute(`UPDATE "Plant" SET tag = NULL WHERE tag = 't4'`);
    await server.database.execute(`UPDATE "Plant" SET tag = 't0' WHERE id = 801000`);
    await expectCountsKept('after re-tags');
    await server.database.execute(`UPDATE "Plant" SET "ownerId" = (SELECT id FROM "User" WHERE name = 'counts-other') WHERE tag IN ('t1', 't2')`);
    await expectCountsKept('after a move to another owner');
    await server.database.execute(`DELETE FROM "Plant" WHERE id >= 800000 AND id < 800200`);
    await expectCountsKept('after a delete of many');
  });

  it('make exact totals and places on the page past the count cap, for every filter with a kept count', async () => {
    const many = COUNT_CAP + 12;
    await server.createToken('counts-many', 'member');
    await insertPlantsOf(
      server.database,
      'counts-many',
      Array.from({ length: many }, (_, index) => ({ id: 2_000_000n + BigInt(index), name: `Many ${index}`, tag: index % 2 === 0 ? 'even' : index % 4 === 1 ? 'odd' : null })),
    );
    await server.database.execute(`UPDATE "Plant" SET tag = 'even' WHERE id = 2000001`);
    const counted = async (where: string) => Number((await server.database.query<{ n: bigint }>(`SELECT COUNT(*) AS n FROM "Plant" p ${where}`))[0]!.n);
    const owner = `p."ownerId" = (SELECT id FROM "User" WHERE name = 'counts-many')`;
    const page = async (input: Record<string, unknown>) =>
      trpcData<{ rows: { id: bigint }[]; total: number; totalExact: boolean; offset: number; offsetExact: boolean }>(
        await trpcCall(server.baseUrl, 'query', 'plants.page', { token: server.adminToken, input: { size: 25, ...input } }),
      );
    for (const [filters, where] of [
      [{}, ''],
      [{ owner: 'counts-many' }, `WHERE ${owner}`],
      [{ tag: 'even' }, `WHERE p.tag = 'even'`],
      [{ owner: 'counts-many', tag: 'even' }, `WHERE ${owner} AND p.tag = 'even'`],
    ] as const) {
      const total = await counted(where);
      const first = await page(filters);
      expect(first, JSON.stringify(filters)).toMatchObject({ total, totalExact: true, offset: 0, offsetExact: true });
      for (const sort of [undefined, { key: 'tag', dir: 'asc' }, { key: 'name', dir: 'desc' }]) {
        const last = await page({ ...filters, sort, cursor: { kind: 'last' } });
        expect(last, `the last page of ${JSON.stringify(filters)} by ${JSON.stringify(sort)}`).toMatchObject({ total, totalExact: true, offset: total - last.rows.length, offsetExact: true });
        // The page before the last, more than the cap from the start: placed from the end.
        const before = await page({ ...filters, sort, cursor: { kind: 'before', id: last.rows[0]!.id } });
        expect(before, `the page before the last of ${JSON.stringify(filters)}`).toMatchObject({ total, totalExact: true, offset: total - last.rows.length - 25, offsetExact: true });
      }
    }
  });

  it('place a page further than the cap from both ends exactly, in every sort both ways, for every filter with a kept count', async () => {
    // One owner, one tag, names in id order, one creation time: in every sort of this owner's or this tag's view a
    // plant's place is its index from the start, or in a descending sort from the end.
    const many = 2 * COUNT_CAP + 500;
    const firstId = 4_000_000n;
    await server.createToken('counts-middle', 'member');
    await insertPlantsOf(
      server.database,
      'counts-middle',
      Array.from({ length: many }, (_, index) => ({ id: firstId + BigInt(index), name: `Middle ${String(index).padStart(6, '0')}`, tag: 'middle' })),
    );
    const page = async (input: Record<string, unknown>) =>
      trpcData<{ rows: { id: bigint }[]; total: number; totalExact: boolean; offset: number; offsetExact: boolean }>(
        await trpcCall(server.baseUrl, 'query', 'plants.page', { token: server.adminToken, input: { size: 25, ...input } }),
      );
    const expectPlaced = async (filters: { owner?: string; tag?: string }, sort: { key: string; dir: 'asc' | 'desc' }, id: bigint, total: number, place: number) => {
      const what = `${JSON.stringify(filters)} by ${sort.key} ${sort.dir}, plant ${id} at ${place} of ${total}`;
      expect(Math.min(place, total - 1 - place), `${what}: further than the cap from both ends`).toBeGreaterThan(COUNT_CAP + 25);
      const after = await page({ ...filters, sort, cursor: { kind: 'after', id } });
      expect(after, `the page after ${what}`).toMatchObject({ total, totalExact: true, offset: place + 1, offsetExact: true });
      const before = await page({ ...filters, sort, cursor: { kind: 'before', id } });
      expect(before, `the page before ${what}`).toMatchObject({ total, totalExact: true, offset: place - 25, offsetExact: true });
    };
    // Nearer the start, and nearer the end.
    for (const index of [COUNT_CAP + 100, many - COUNT_CAP - 200]) {
      const id = firstId + BigInt(index);
      for (const filters of [{ owner: 'counts-middle' }, { tag: 'middle' }]) {
        for (const key of ['id', 'name', 'tag', 'created', 'owner']) {
          await expectPlaced(filters, { key, dir: 'asc' }, id, many, index);
          await expectPlaced(filters, { key, dir: 'desc' }, id, many, many - 1 - index);
        }
      }
      // The owner's tag, and the whole store (other tests' plants too), by id.
      const count = async (where: string) => Number((await server.database.query<{ n: bigint }>(`SELECT COUNT(*) AS n FROM "Plant" p ${where}`))[0]!.n);
      await expectPlaced({ owner: 'counts-middle', tag: 'middle' }, { key: 'id', dir: 'desc' }, id, many, many - 1 - index);
      await expectPlaced({}, { key: 'id', dir: 'asc' }, id, await count(''), await count(`WHERE p.id < ${id}`));
    }
  });

  it('are what the suggestions answer, for a member and for an admin', async () => {
    const counts = await server.database.query<Count>(
      `SELECT c."ownerId", c.tag, c.plants FROM "PlantTagCount" c JOIN "User" u ON u.id = c."ownerId" WHERE u.name = 'counts-member' AND lower(c.tag) LIKE 't%'`,
    );
    const answer = (await suggestions(member, { prefix: 'T' })).map((row) => `${row.tag} ${row.count}`);
    expect(answer.sort()).toEqual(counts.map((row) => `${row.tag} ${row.plants}`).sort());
    const fern = (await suggestions(server.adminToken, { prefix: 'fern' })).find((row) => row.tag === 'fern');
    const [total] = await server.database.query<{ plants: bigint }>(`SELECT COUNT(*) AS plants FROM "Plant" WHERE tag = 'fern'`);
    expect(fern?.count).toBe(Number(total!.plants));
  });

  it('sort tags in any case together, by the folded tag the database keeps from every write path', async () => {
    const sorter = (await server.createToken('sort-member', 'member')).token;
    const rest = server.client(sorter);
    for (const [id, tag] of [
      [3_000_001n, 'Tropical'],
      [3_000_002n, 'aquatic'],
      [3_000_003n, 'tropical'],
      [3_000_004n, undefined],
      [3_000_005n, 'Zebra'],
    ] as const) {
      expectStatus(await rest.post('/api/plants', plantBody(id, `Sorted ${id}`, tag)), 200);
    }
    // Written behind the app's back, one with a wrong folded tag given: the database folds it all the same.
    await insertPlantsOf(server.database, 'sort-member', [{ id: 3_000_006n, name: 'Sorted by SQL', tag: 'ÉCLAIR' }]);
    await server.database.execute(`UPDATE "Plant" SET "tagFolded" = 'zzz' WHERE id = 3000006`);
    await server.database.execute(`UPDATE "Plant" SET tag = 'AQUATIC' WHERE id = 3000002`);
    expectStatus(await rest.request('PATCH', '/api/plants/3000005', { body: '{"tag": "zebra"}', contentType: 'application/merge-patch+json' }), 200);
    const folded = await server.database.query<{ id: bigint; tagFolded: string | null }>(`SELECT id, "tagFolded" FROM "Plant" WHERE id >= 3000001 AND id <= 3000006 ORDER BY id`);
    expect(folded.map((row) => row.tagFolded)).toEqual(['tropical', 'aquatic', 'tropical', null, 'zebra', 'eclair']);
    const order = async (dir: 'asc' | 'desc') =>
      trpcData<{ rows: { id: bigint }[] }>(await trpcCall(server.baseUrl, 'query', 'plants.page', { token: sorter, input: { size: 25, sort: { key: 'tag', dir } } })).rows.map((row) => row.id);
    expect(await order('asc')).toEqual([3_000_002n, 3_000_006n, 3_000_001n, 3_000_003n, 3_000_005n, 3_000_004n]);
    expect(await order('desc')).toEqual([3_000_004n, 3_000_005n, 3_000_003n, 3_000_001n, 3_000_006n, 3_000_002n]);
  });

  it.runIf(testEngine === 'postgresql')('follow a TRUNCATE (PostgreSQL: it fires no DELETE trigger), last: it empties the store', async () => {
    await server.database.execute(`TRUNCATE "Plant" CASCADE`);
    await expectCountsKept('after a TRUNCATE');
  });
});
