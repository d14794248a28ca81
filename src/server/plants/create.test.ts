import { describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';
import { foldForSearch } from '@/shared/plants';
import { actorOf, failureOf, signIn } from '@test-support/actors';

/**
 * A create is one INSERT written as SQL (service.ts, `createPlant`), no longer Prisma's `plant.create`: these
 * hold it to what `plant.create` stored and to what a refused create leaves behind (nothing at all).
 */

/** Everything the database holds about a plant's id beside the row: its webhook events, its log rows, its owner's list version. */
async function traces(id: bigint, ownerId: number) {
  const [deliveries, changes, version] = await Promise.all([
    db.webhookDelivery.count({ where: { payload: { contains: `"id":${id},` } } }),
    db.plantChange.count({ where: { plantId: id } }),
    db.plantListVersion.findUnique({ where: { ownerId }, select: { version: true } }),
  ]);
  return { deliveries, changes, version: version?.version ?? null };
}

/** A signed-in user's caller and user id. */
async function member(name: string) {
  const signedIn = await signIn(name);
  return { caller: signedIn.caller, userId: actorOf(signedIn).userId };
}

describe('a create', () => {
  it('stores the row as Prisma’s create stored it: the time of the create as the client reads it, the name folded, the owner', async () => {
    const { caller, userId } = await member('create-stored');
    const before = Date.now();
    await caller.plants.create({ id: 8_001n, name: 'Straße Ivy', tag: 'climber' });
    const after = Date.now();
    // Written through the client's own model: the text SQLite holds is Prisma's DateTime format.
    await db.plant.create({ data: { id: 8_002n, name: 'reference', ownerId: userId }, select: { id: true } });

    const rows = await db.plant.findMany({
      where: { id: { in: [8_001n, 8_002n] } },
      orderBy: { id: 'asc' },
      select: { id: true, name: true, nameFolded: true, tag: true, ownerId: true, createdAt: true },
    });
    expect(rows[0]).toEqual({ id: 8_001n, name: 'Straße Ivy', nameFolded: foldForSearch('Straße Ivy'), tag: 'climber', ownerId: userId, createdAt: expect.any(Date) });
    expect(rows[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(rows[0]!.createdAt.getTime()).toBeLessThanOrEqual(after);
    // Byte for byte the same kind of value as the client's own create writes (on SQLite: the same text format),
    // so the admin page's sort by creation time keeps both in one order.
    const stored = await db.$queryRaw<{ text: string }[]>`SELECT CAST("createdAt" AS TEXT) AS text FROM "Plant" WHERE id IN (${8_001n}, ${8_002n}) ORDER BY id`;
    const shape = (text: string) => text.replace(/\d/g, '0');
    expect(shape(stored[0]!.text)).toBe(shape(stored[1]!.text));
    // The name search finds it at once: the folded name went into the index with the row.
    expect((await caller.plants.list({ q: 'strasse' })).map((plant) => plant.id)).toEqual([8_001n]);
  });

  it('refused for a taken id writes nothing: no webhook event, no log row, no version bump, the plant there unchanged', async () => {
    const first = await member('create-first');
    const second = await member('create-second');
    const endpoint = await db.webhookEndpoint.create({
      data: { url: 'https://receiver.example/create', events: ',plant.created,', secret: 'unused here', createdAtMs: 0n },
      select: { id: true },
    });
    try {
      await first.caller.plants.create({ id: 8_101n, name: 'First', tag: 'kept' });
      const firstBefore = await traces(8_101n, first.userId);
      const secondBefore = await traces(8_101n, second.userId);
      expect(firstBefore).toMatchObject({ deliveries: 1, changes: 1 });

      for (const caller of [second.caller, first.caller]) {
        expect(await failureOf(caller.plants.create({ id: 8_101n, name: 'Second' }))).toMatchObject({ code: 'BAD_REQUEST', kind: 'plantIdTaken', field: 'id' });
      }
      expect(await traces(8_101n, first.userId)).toEqual(firstBefore);
      expect(await traces(8_101n, second.userId)).toEqual(secondBefore);
      expect(await db.plant.findUnique({ where: { id: 8_101n }, select: { name: true, tag: true, ownerId: true } })).toEqual({ name: 'First', tag: 'kept', ownerId: first.userId });
    } finally {
      await db.webhookDelivery.deleteMany({ where: { endpointId: endpoint.id } });
      await db.webhookEndpoint.delete({ where: { id: endpoint.id } });
    }
  });
});
