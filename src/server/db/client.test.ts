import { describe, expect, it } from 'vitest';

import { db } from './client';

describe('the SQLite client', () => {
  it('keeps statements of other requests out of an open transaction: a rollback undoes only its own writes', async () => {
    const owner = await db.user.create({ data: { name: 'client-owner' } });
    let insideOpen!: () => void;
    const opened = new Promise<void>((resolve) => (insideOpen = resolve));
    const failing = db.$transaction(async (tx) => {
      await tx.plant.create({ data: { id: 880_001n, name: 'rolled back', ownerId: owner.id } });
      insideOpen();
      // While this transaction waits, another request writes and reads.
      await new Promise((resolve) => setTimeout(resolve, 100));
      throw new Error('the transaction fails');
    });
    await opened;
    const [other, seen] = await Promise.all([
      db.plant.create({ data: { id: 880_002n, name: 'committed on its own', ownerId: owner.id } }),
      db.plant.findUnique({ where: { id: 880_001n } }),
    ]);
    await expect(failing).rejects.toThrow('the transaction fails');
    expect(other.id).toBe(880_002n);
    // The other request saw nothing uncommitted, and its write survived the rollback.
    expect(seen).toBeNull();
    expect((await db.plant.findMany({ where: { id: { in: [880_001n, 880_002n] } } })).map((plant) => plant.id)).toEqual([880_002n]);
  });
});
