import { describe, expect, it } from 'vitest';

import { config } from '@/server/config';
import { db } from '@/server/db/client';

import { FIRST_ADMIN_NAME, hashToken, issueFirstAdminToken, issueToken, revokeToken, checkToken } from './service';

const later = (at: Date, ms: number) => new Date(at.getTime() + ms);

/** What another process (the token command, a second instance) does: change the row, not this process's cache. */
async function revokeBehindTheBack(tokenId: number): Promise<void> {
  await db.apiToken.update({ where: { id: tokenId }, data: { revokedAt: new Date() } });
}

// First in the file: it needs the empty database the unit setup gives each file.
describe('hashToken', () => {
  it('is the hex SHA-256 of the token’s UTF-8, the form the database stores (a change would lock every token out)', () => {
    expect(hashToken(`pst_${'a'.repeat(43)}`)).toBe('1d7ea2639fa116d5790694008e1721af2471675017dec7f8da4c639684737b9f');
    expect(hashToken('pst_ünï')).toBe('03fa85494244d0c088bde1473b2b6142ab8d24e05cf450dfedefb932aff48b0f');
  });
});

describe('issueFirstAdminToken', () => {
  it('creates the admin and one token on an empty database, once when called twice at the same time', async () => {
    const issued = await Promise.all([issueFirstAdminToken(), issueFirstAdminToken()]);
    const created = issued.filter((result) => result !== null);
    expect(created).toHaveLength(1);
    expect(created[0]!.user).toMatchObject({ name: FIRST_ADMIN_NAME, role: 'admin' });
    expect(await checkToken(created[0]!.token)).toMatchObject({ ok: true, tokenId: created[0]!.id, actor: { role: 'admin' } });
    expect(await db.apiToken.count()).toBe(1);
  });

  it('does nothing once there are users', async () => {
    expect(await issueFirstAdminToken()).toBeNull();
  });
});

describe('checkToken and its cache of accepted tokens', () => {
  it('honours a revoke made elsewhere for at most the cache lifetime, then refuses', async () => {
    const issued = await issueToken({ userName: 'cache-elsewhere' });
    const acceptedAt = new Date();
    expect(await checkToken(issued.token, acceptedAt)).toMatchObject({ ok: true, tokenId: issued.id });
    await revokeBehindTheBack(issued.id);

    expect(await checkToken(issued.token, later(acceptedAt, config().AUTH_CACHE_TTL_MS - 1))).toMatchObject({ ok: true });
    expect(await checkToken(issued.token, later(acceptedAt, config().AUTH_CACHE_TTL_MS))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('looks a token up again when the clock steps back, instead of trusting an entry of unknown age', async () => {
    const issued = await issueToken({ userName: 'cache-clock' });
    const acceptedAt = new Date();
    expect(await checkToken(issued.token, acceptedAt)).toMatchObject({ ok: true });
    await revokeBehindTheBack(issued.id);
    expect(await checkToken(issued.token, later(acceptedAt, -60_000))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses at once a token revoked through this process', async () => {
    const issued = await issueToken({ userName: 'cache-here' });
    expect(await checkToken(issued.token)).toMatchObject({ ok: true });
    await revokeToken(issued.id);
    expect(await checkToken(issued.token)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses a cached token from the moment it expires', async () => {
    const now = new Date();
    const issued = await issueToken({ userName: 'cache-expiring', expiresAt: later(now, 1_000) });
    expect(await checkToken(issued.token, now)).toMatchObject({ ok: true });
    expect(await checkToken(issued.token, later(now, 999))).toMatchObject({ ok: true });
    expect(await checkToken(issued.token, later(now, 1_000))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('applies a role change made through this process to tokens already in use', async () => {
    const admin = await issueToken({ userName: 'cache-promoted', role: 'member' });
    expect(await checkToken(admin.token)).toMatchObject({ ok: true, actor: { role: 'member' } });
    await issueToken({ userName: 'cache-promoted', role: 'admin' });
    expect(await checkToken(admin.token)).toMatchObject({ ok: true, actor: { role: 'admin' } });
  });

  it('never caches a refusal: a token is refused until it exists, then accepted', async () => {
    expect(await checkToken(`pst_${'x'.repeat(43)}`)).toEqual({ ok: false, reason: 'invalid' });
    const issued = await issueToken({ userName: 'cache-negative' });
    expect(await checkToken(issued.token)).toMatchObject({ ok: true });
  });
});
