import { afterEach, describe, expect, it, vi } from 'vitest';

import type { Actor } from '@/server/auth/permissions';
import { db } from '@/server/db/client';
import { actorOf, signIn } from '@test-support/actors';

import { listPlants } from './service';
import { keepPlantListVersions } from './versions';

/**
 * The version a REST list hands back for its ETag (`withVersion`, service.ts listPlants) is never newer than
 * the rows it answers with: read after them, a change committed in between would be in the version and not
 * in the answer, and a poll with that ETag would get a stale 304 (CONTRACT 1.2.0). Here a change commits after
 * every statement the list sends: a member's only changes are creates of plants the query finds, so their
 * version (the count of their changes) must be at most the number of their plants the answer holds, and
 * exactly that where the version is read with the rows, in one statement.
 */

const insertPlant = (ownerId: number, id: bigint, name: string) =>
  db.$executeRaw`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") VALUES (${id}, ${name}, ${name.toLowerCase()}, ${ownerId}, CURRENT_TIMESTAMP)`;

/** Every plant a statement of `listPlants` reads gets company: after each, one more plant of `owner` commits. */
function commitAfterEveryStatement(owner: Actor, nextId: () => bigint, name: string) {
  const queryRaw = db.$queryRaw.bind(db);
  const spy = vi.spyOn(db, '$queryRaw').mockImplementation(((...args: Parameters<typeof db.$queryRaw>) =>
    queryRaw(...args).then(async (rows: unknown) => {
      await insertPlant(owner.userId, nextId(), name);
      return rows;
    })) as typeof db.$queryRaw);
  return { statements: () => spy.mock.calls.length };
}

/** The count of a member's version (`owner 7:12` → 12). */
function countOf(member: Actor, version: string | undefined): number {
  expect(version).toMatch(new RegExp(`^owner ${member.userId}:\\d+$`));
  return Number(version!.split(':')[1]);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the version a list reads for its ETag', () => {
  it.each([
    ['kept in the process (SQLite: the watch answers what is read before)', true],
    ['read through the client', false],
  ])('is read with the rows or before them, never after: a change committed after each statement is never in the version without being in the answer (%s)', async (_, kept) => {
    const stop = kept ? keepPlantListVersions(process.env.DATABASE_URL!).stop : () => {};
    try {
      const member = actorOf(await signIn(`list-version-member-${kept}`));
      const base = kept ? 71_000_000n : 72_000_000n;
      let next = base;
      for (let index = 0; index < 3; index++) await insertPlant(member.userId, next++, `Fern ${index}`);

      // One statement: the version is of the rows' own snapshot, whatever commits after.
      const injected = commitAfterEveryStatement(member, () => next++, 'Fern later');
      const page = await listPlants(member, { limit: 1000 }, { withVersion: true });
      expect(page.plants).toHaveLength(3);
      expect(countOf(member, page.version)).toBe(page.plants.length);
      expect(injected.statements()).toBe(1);

      // A name search, with the statements of its plan before the rows: each commit before the rows is in both.
      const searched = await listPlants(member, { limit: 1000, q: 'fern' }, { withVersion: true });
      expect(countOf(member, searched.version)).toBe(searched.plants.length);
      expect(injected.statements()).toBeGreaterThan(1);

      // An empty page carries no version in its rows: it is read first, then the rows again.
      const empty = await listPlants(member, { limit: 1000, after: next + 1_000n }, { withVersion: true });
      expect(empty.plants).toEqual([]);
      const all = await listPlants(member, { limit: 1000 }, { withVersion: true });
      expect(countOf(member, empty.version)).toBeLessThanOrEqual(all.plants.length);
    } finally {
      stop();
    }
  });

  it("is at most the rows' where the page takes two statements (SQLite's id-order probe, then the walk)", async () => {
    // More matches of "orchid" in the store than the index plan takes (INDEXED_MATCHES_MAX): the filter plan, whose
    // probe reads the first 1,000 by id. The member's first plant is among them, the rest after: the probe finds
    // too few of their rows, and the walk reads the page.
    const crowd = actorOf(await signIn('list-version-crowd'));
    const member = actorOf(await signIn('list-version-prober'));
    await insertPlant(member.userId, 73_000_000n, 'Orchid first');
    const names = Array.from({ length: 2_100 }, (_, index) => `(${73_000_001 + index}, 'Orchid ${index}', 'orchid ${index}', ${crowd.userId}, CURRENT_TIMESTAMP)`);
    await db.$executeRawUnsafe(`INSERT INTO "Plant" (id, name, "nameFolded", "ownerId", "createdAt") VALUES ${names.join(', ')}`);
    let next = 74_000_000n;
    for (let index = 0; index < 2; index++) await insertPlant(member.userId, next++, `Orchid late ${index}`);

    const injected = commitAfterEveryStatement(member, () => next++, 'Orchid later');
    const page = await listPlants(member, { limit: 1000, q: 'orchid' }, { withVersion: true });
    expect(page.plants.length).toBeGreaterThanOrEqual(3);
    expect(countOf(member, page.version)).toBeLessThanOrEqual(page.plants.length);
    expect(injected.statements()).toBeGreaterThanOrEqual(2);
  });

  it('is not read for the doors that ask for none (tRPC, MCP): their statement is the one it always was', async () => {
    const member = actorOf(await signIn('list-version-unasked'));
    await insertPlant(member.userId, 75_000_000n, 'Aloe');
    const spy = vi.spyOn(db, '$queryRaw');
    const page = await listPlants(member, { limit: 20 });
    expect(page.version).toBeUndefined();
    expect(spy.mock.calls.map(([sql]) => (sql as unknown as { sql: string }).sql ?? String(sql)).join('\n')).not.toContain('PlantListVersion');
  });
});
