import { describe, expect, it } from 'vitest';

import { db } from '@/server/db';

import { DEFAULT_AUTH_CACHE_TTL_MS } from './token-cache';
import { issueToken, revokeToken, verifyToken } from './tokens';

const later = (at: Date, ms: number) => new Date(at.getTime() + ms);

/** What another process (the token command, a second instance) does: change the row, not this process's cache. */
async function revokeBehindTheBack(tokenId: number): Promise<void> {
  await db.apiToken.update({ where: { id: tokenId }, data: { revokedAt: new Date() } });
}

describe('verifyToken and its cache of accepted tokens', () => {
  it('honours a revoke made elsewhere for at most the cache lifetime, then refuses', async () => {
    const issued = await issueToken({ userName: 'cache-elsewhere' });
    const acceptedAt = new Date();
    expect(await verifyToken(issued.token, acceptedAt)).toMatchObject({ ok: true, tokenId: issued.id });
    await revokeBehindTheBack(issued.id);

    expect(await verifyToken(issued.token, later(acceptedAt, DEFAULT_AUTH_CACHE_TTL_MS - 1))).toMatchObject({ ok: true });
    expect(await verifyToken(issued.token, later(acceptedAt, DEFAULT_AUTH_CACHE_TTL_MS))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses at once a token revoked through this process', async () => {
    const issued = await issueToken({ userName: 'cache-here' });
    expect(await verifyToken(issued.token)).toMatchObject({ ok: true });
    await revokeToken(issued.id);
    expect(await verifyToken(issued.token)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('refuses a cached token from the moment it expires', async () => {
    const now = new Date();
    const issued = await issueToken({ userName: 'cache-expiring', expiresAt: later(now, 1_000) });
    expect(await verifyToken(issued.token, now)).toMatchObject({ ok: true });
    expect(await verifyToken(issued.token, later(now, 999))).toMatchObject({ ok: true });
    expect(await verifyToken(issued.token, later(now, 1_000))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('applies a role change made through this process to tokens already in use', async () => {
    const admin = await issueToken({ userName: 'cache-promoted', role: 'member' });
    expect(await verifyToken(admin.token)).toMatchObject({ ok: true, actor: { role: 'member' } });
    await issueToken({ userName: 'cache-promoted', role: 'admin' });
    expect(await verifyToken(admin.token)).toMatchObject({ ok: true, actor: { role: 'admin' } });
  });

  it('never caches a refusal: a token is refused until it exists, then accepted', async () => {
    expect(await verifyToken(`pst_${'x'.repeat(43)}`)).toEqual({ ok: false, reason: 'invalid' });
    const issued = await issueToken({ userName: 'cache-negative' });
    expect(await verifyToken(issued.token)).toMatchObject({ ok: true });
  });
});
