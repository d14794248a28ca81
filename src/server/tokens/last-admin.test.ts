import { describe, expect, it, vi } from 'vitest';

import { db } from '@/server/db/client';
import { AppError } from '@/shared/errors';

import { issueToken, revokeToken, setRoleOfTokenUser } from './service';

/** Every admin token that still works. */
async function activeAdminTokens(): Promise<number[]> {
  const now = new Date();
  const rows = await db.apiToken.findMany({
    where: { revokedAt: null, user: { role: 'admin' }, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    select: { id: true },
  });
  return rows.map((row) => row.id);
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

// One file, one database: the tests build on each other's admins in order.
describe('the last working admin token', () => {
  it('is never revoked; any other token is', async () => {
    const first = await issueToken({ userName: 'only-admin', role: 'admin' });
    const member = await issueToken({ userName: 'plain-member' });
    expect(await activeAdminTokens()).toEqual([first.id]);

    const error = await refusal(revokeToken(first.id));
    expect(error.kind).toBe('lastAdmin');
    expect(error.message).toMatch(/last working admin token/);
    expect(await activeAdminTokens()).toEqual([first.id]);

    expect(await revokeToken(member.id)).toBe(true);
    // Twice is still fine (the first time stays), and an unknown id is "no such token".
    expect(await revokeToken(member.id)).toBe(true);
    expect(await revokeToken(999_999)).toBe(false);

    // With a second admin token (of the same admin), the first may go.
    const second = await issueToken({ userName: 'only-admin' });
    expect(await revokeToken(first.id)).toBe(true);
    expect((await refusal(revokeToken(second.id))).kind).toBe('lastAdmin');
  });

  it('does not count expired tokens as working, and always lets an expired one be revoked', async () => {
    const soon = await issueToken({ userName: 'expiring-admin', role: 'admin', expiresAt: new Date(Date.now() - 1_000) });
    expect(await revokeToken(soon.id)).toBe(true);
  });

  it('keeps an admin who is the only one with a working token from being made a member', async () => {
    const [survivor] = await activeAdminTokens();
    const owner = await db.apiToken.findUniqueOrThrow({ where: { id: survivor! }, select: { user: { select: { name: true } } } });
    const error = await refusal(issueToken({ userName: owner.user.name, role: 'member' }));
    expect(error.kind).toBe('lastAdmin');
    expect((await db.user.findUniqueOrThrow({ where: { name: owner.user.name } })).role).toBe('admin');

    // Another admin with a working token: now the demotion goes through.
    await issueToken({ userName: 'second-admin', role: 'admin' });
    const demoted = await issueToken({ userName: owner.user.name, role: 'member' });
    expect(demoted.user.role).toBe('member');
  });

  it('holds when two admins revoke each other’s only token at the same moment', async () => {
    // Leaves exactly two working admin tokens, then races the two revokes, many times over.
    for (let round = 0; round < 20; round++) {
      const [keep] = await activeAdminTokens();
      for (const id of (await activeAdminTokens()).slice(1)) await revokeToken(id);
      const other = await issueToken({ userName: `racer-${round}`, role: 'admin' });
      expect((await activeAdminTokens()).sort()).toEqual([keep!, other.id].sort());
      const results = await Promise.allSettled([revokeToken(keep!), revokeToken(other.id)]);
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      expect(await activeAdminTokens()).toHaveLength(1);
    }
  });

  it('changes the role of a token’s user, and keeps the last admin with a working token one', async () => {
    const [survivor] = await activeAdminTokens();
    const survivorUser = (await db.apiToken.findUniqueOrThrow({ where: { id: survivor! }, select: { user: { select: { name: true } } } })).user.name;
    expect((await refusal(setRoleOfTokenUser(survivor!, 'member'))).kind).toBe('lastAdmin');
    expect((await db.user.findUniqueOrThrow({ where: { name: survivorUser } })).role).toBe('admin');

    const member = await issueToken({ userName: 'promoted-member' });
    expect(await setRoleOfTokenUser(member.id, 'admin')).toEqual({ userName: 'promoted-member', role: 'admin' });
    expect((await activeAdminTokens()).sort()).toEqual([survivor!, member.id].sort());
    // Two admins: one of them may become a member, then the other is the last.
    expect(await setRoleOfTokenUser(survivor!, 'member')).toEqual({ userName: survivorUser, role: 'member' });
    expect((await refusal(setRoleOfTokenUser(member.id, 'member'))).kind).toBe('lastAdmin');
    expect(await activeAdminTokens()).toEqual([member.id]);
    expect(await setRoleOfTokenUser(999_999, 'admin')).toBeNull();
  });

  it('holds when a token made for a member, who is made an admin meanwhile, names the member role', async () => {
    // One admin with a working token, and a member. A new token for the member "as a member" reads its user; just
    // then (another request, run here between the read and the write) the member is made an admin and the first
    // admin a member, which the rule allows: the member is now the last admin. The token's write must not make
    // them a member again (issueToken's upsert only ever raises a role; the answer says the role they have).
    const [last] = await activeAdminTokens();
    const member = await issueToken({ userName: 'member-then-admin' });
    const read = db.user.findUnique.bind(db.user);
    const spy = vi.spyOn(db.user, 'findUnique').mockImplementationOnce((async (args: Parameters<typeof read>[0]) => {
      const user = await read(args);
      await setRoleOfTokenUser(member.id, 'admin');
      await setRoleOfTokenUser(last!, 'member');
      return user;
    }) as never);
    try {
      const issued = await issueToken({ userName: 'member-then-admin', role: 'member' });
      expect(issued.user.role).toBe('admin');
      expect((await activeAdminTokens()).sort()).toEqual([member.id, issued.id].sort());
    } finally {
      spy.mockRestore();
    }
  });
});
