import 'server-only';

import { hash, randomBytes } from 'node:crypto';

import { Prisma } from '@/generated/prisma/client';
import type { Role } from '@/generated/prisma/enums';
import { db } from '@/server/db/client';
import { writeAlone } from '@/server/db/dialect';
import { isUniqueViolation } from '@/server/db/error-codes';
import { AppError } from '@/shared/errors';

import type { Actor } from '@/server/auth/permissions';
import { cacheGeneration, forgetAcceptedTokens, recallAcceptedToken, rememberAcceptedToken } from './cache';

/**
 * Tokens look like `pst_<43 base64url characters>`: 256 random bits behind a fixed prefix that secret
 * scanners can match. Only the SHA-256 of a token is stored; a lookup by hash is a lookup by a value an
 * attacker cannot choose, so it leaks nothing through timing.
 */
export const TOKEN_PREFIX = 'pst_';
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;
/** Characters of a token kept for display: the prefix and six of the secret, never enough to guess it. */
const DISPLAY_PREFIX_LENGTH = TOKEN_PREFIX.length + 6;
const LAST_USED_PRECISION_MS = 60_000;

// One call (`crypto.hash`, Node >= 20.12): the same bytes as createHash().update().digest(), without the Hash object.
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** A fresh token, the hash that is stored in its place, and the prefix kept for display. */
function newToken(): { token: string; hash: string; prefix: string } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashToken(token), prefix: token.slice(0, DISPLAY_PREFIX_LENGTH) };
}

export type IssuedToken = { id: number; token: string; prefix: string; user: Actor; createdUser: boolean };

/**
 * "Somebody can still manage tokens": an admin other than `exceptUser`, and other than the owner of
 * `exceptToken`'s slot, holds a token that is neither revoked, nor expired, nor `exceptToken`. The last-admin
 * rule of both revoking and demoting, as SQL, so it is evaluated inside the very statement that writes.
 */
function anotherActiveAdminToken(now: Date, except: { tokenId?: number; userId?: number }): Prisma.Sql {
  return Prisma.sql`EXISTS (
    SELECT 1 FROM "ApiToken" t JOIN "User" u ON u.id = t."userId"
    WHERE u.role = 'admin' AND t."revokedAt" IS NULL AND (t."expiresAt" IS NULL OR t."expiresAt" > ${now})
      ${except.tokenId === undefined ? Prisma.empty : Prisma.sql`AND t.id <> ${except.tokenId}`}
      ${except.userId === undefined ? Prisma.empty : Prisma.sql`AND u.id <> ${except.userId}`})`;
}

/** Every last-admin guarded write takes this lock on PostgreSQL (db/dialect.ts, `writeAlone`), so two never both pass their check. */
const LAST_ADMIN_LOCK = 72_707_370;
const guardedWrite = (statement: Prisma.Sql) => writeAlone(statement, LAST_ADMIN_LOCK);

/**
 * Creates the user when it does not exist yet; an existing user takes the role given, if any, except that
 * an admin is never made a member while nobody else could manage tokens then (the rule revoking keeps too).
 * No interactive transaction: under SQLite's single writer a read-then-write transaction fails instead of
 * waiting when another process writes first; the demotion is one guarded statement, the rest is safe on its own.
 */
export async function issueToken(options: { userName: string; role?: Role; expiresAt?: Date }): Promise<IssuedToken> {
  const existing = await db.user.findUnique({ where: { name: options.userName }, select: { id: true, role: true } });
  if (existing?.role === 'admin' && options.role === 'member') await demote({ id: existing.id, name: options.userName });
  const user = await db.user.upsert({
    where: { name: options.userName },
    create: { name: options.userName, role: options.role ?? 'member' },
    // Never an empty update: Prisma turns that into a read-then-write transaction, which SQLite refuses
    // at once (instead of waiting) when another process wrote in between. This stays one INSERT … ON CONFLICT.
    // A demotion was written above, under the guard; here the role is only ever raised or kept.
    update: options.role === 'admin' ? { role: 'admin' } : { name: options.userName },
    select: { id: true, name: true, role: true },
  });
  // A role given may have changed the user's role, also when another request changed it meanwhile: no token
  // of theirs may keep the old role from the cache.
  if (options.role) forgetAcceptedTokens();
  const { token, hash, prefix } = newToken();
  const row = await db.apiToken.create({
    data: { userId: user.id, hash, prefix, expiresAt: options.expiresAt ?? null },
    select: { id: true },
  });
  return { id: row.id, token, prefix, user: { userId: user.id, name: user.name, role: user.role }, createdUser: !existing };
}

/** Makes an admin a member, unless nobody else could manage tokens then (AppError lastAdmin): one guarded statement. */
async function demote(user: { id: number; name: string }): Promise<void> {
  const demoted = await guardedWrite(Prisma.sql`UPDATE "User" SET role = 'member' WHERE id = ${user.id} AND ${anotherActiveAdminToken(new Date(), { userId: user.id })}`);
  if (demoted === 0 && (await db.user.findUnique({ where: { id: user.id }, select: { role: true } }))?.role === 'admin') {
    throw new AppError('lastAdmin', `${user.name} stays an admin: no other admin has a working token, so nobody could manage tokens`, 'role');
  }
}

/**
 * Makes the user a token belongs to an admin or a member (a role is the user's: every token of theirs changes
 * with it). Making the last admin with a working token a member is refused, as revoking their last token is.
 * Null when there is no such token.
 */
export async function setRoleOfTokenUser(tokenId: number, role: Role): Promise<{ userName: string; role: Role } | null> {
  const token = await db.apiToken.findUnique({ where: { id: tokenId }, select: { user: { select: { id: true, name: true } } } });
  if (!token) return null;
  if (role === 'member') await demote(token.user);
  else await db.user.update({ where: { id: token.user.id }, data: { role: 'admin' }, select: { id: true } });
  // No token of theirs may keep the old role from the cache.
  forgetAcceptedTokens();
  return { userName: token.user.name, role };
}

export const FIRST_ADMIN_NAME = 'admin';

/**
 * On an empty database: creates the user "admin" and its first token. Several instances may start on one
 * empty PostgreSQL database at the same moment; the unique user name lets exactly one of them do it, so
 * one token is printed, not one per instance. User and token are one write, so a crash between the two
 * cannot leave an admin whose token was never shown. Null when there were users already.
 */
export async function issueFirstAdminToken(): Promise<IssuedToken | null> {
  if ((await db.user.count()) > 0) return null;
  const { token, hash, prefix } = newToken();
  try {
    const user = await db.user.create({
      data: { name: FIRST_ADMIN_NAME, role: 'admin', tokens: { create: { hash, prefix } } },
      select: { id: true, name: true, role: true, tokens: { select: { id: true } } },
    });
    return { id: user.tokens[0]!.id, token, prefix, user: { userId: user.id, name: user.name, role: user.role }, createdUser: true };
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}

export type TokenCheck = { ok: true; actor: Actor; tokenId: number } | { ok: false; reason: 'invalid' };

/**
 * A token accepted in the last few seconds is taken from the cache (cache.ts states the bound);
 * anything else is looked up. Refusals are never cached: a client with a bad token pays a lookup, and
 * the failed-authentication rate limit is what bounds those. The answer is at once (no promise) when no
 * lookup is needed, a token refused by its form or one from the cache, so the doors' guard answers a token
 * it accepted a moment ago without a promise and a turn of the microtask queue per level.
 */
export function checkToken(token: string, now = new Date()): TokenCheck | Promise<TokenCheck> {
  if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: 'invalid' };
  const hash = hashToken(token);
  const recalled = recallAcceptedToken(hash, now);
  if (recalled) return { ok: true, actor: recalled.actor, tokenId: recalled.tokenId };
  return lookUpToken(hash, now);
}

async function lookUpToken(hash: string, now: Date): Promise<TokenCheck> {
  const generation = cacheGeneration();
  const row = await db.apiToken.findUnique({
    where: { hash },
    select: {
      id: true,
      revokedAt: true,
      expiresAt: true,
      lastUsedAt: true,
      user: { select: { id: true, name: true, role: true } },
    },
  });
  if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return { ok: false, reason: 'invalid' };
  // "Last used" is for people, so minute precision will do; a write on every request would serialise reads
  // behind SQLite's single writer.
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_PRECISION_MS) {
    await db.apiToken.update({ where: { id: row.id }, data: { lastUsedAt: now }, select: { id: true } });
  }
  const actor: Actor = { userId: row.user.id, name: row.user.name, role: row.user.role };
  rememberAcceptedToken(hash, { actor, tokenId: row.id, expiresAt: row.expiresAt }, now, generation);
  return { ok: true, actor, tokenId: row.id };
}

export type TokenSummary = {
  id: number;
  prefix: string;
  userName: string;
  role: Role;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
};

/** How many tokens the list shows: every one ever issued (revoked and expired ones too). */
export function countTokens(): Promise<number> {
  return db.apiToken.count();
}

export async function listTokens(): Promise<TokenSummary[]> {
  const rows = await db.apiToken.findMany({
    orderBy: { id: 'asc' },
    select: {
      id: true,
      prefix: true,
      createdAt: true,
      lastUsedAt: true,
      expiresAt: true,
      revokedAt: true,
      user: { select: { name: true, role: true } },
    },
  });
  return rows.map(({ user, ...token }) => ({ ...token, userName: user.name, role: user.role }));
}

/**
 * Returns false when there is no such token. Revoking twice keeps the first revocation time. The last
 * active admin token is never revoked (AppError lastAdmin): nobody could sign in to manage tokens then. The
 * check is part of the one guarded UPDATE, so two admins revoking each other's only token at once cannot
 * both succeed, across processes and instances.
 */
export async function revokeToken(id: number): Promise<boolean> {
  const now = new Date();
  const revoked = await guardedWrite(Prisma.sql`
    UPDATE "ApiToken" SET "revokedAt" = ${now}
    WHERE id = ${id} AND "revokedAt" IS NULL AND (
      NOT EXISTS (SELECT 1 FROM "User" o WHERE o.id = "ApiToken"."userId" AND o.role = 'admin')
      OR ("ApiToken"."expiresAt" IS NOT NULL AND "ApiToken"."expiresAt" <= ${now})
      OR ${anotherActiveAdminToken(now, { tokenId: id })})`);
  forgetAcceptedTokens();
  if (revoked > 0) return true;
  const token = await db.apiToken.findUnique({ where: { id }, select: { revokedAt: true } });
  if (token === null) return false;
  if (token.revokedAt !== null) return true;
  throw new AppError(
    'lastAdmin',
    `token ${id} is the last working admin token: revoking it would leave nobody able to manage tokens. Create another admin token first`,
    'id',
  );
}

export type TokenState = { id: number; revokedAt: Date | null; expiresAt: Date | null; actor: Actor };

/** The tokens' state now, for those that still exist (held-access.ts decides from it which streams end). */
export async function tokenStates(ids: number[]): Promise<TokenState[]> {
  const rows = await db.apiToken.findMany({
    where: { id: { in: ids } },
    select: { id: true, revokedAt: true, expiresAt: true, user: { select: { id: true, name: true, role: true } } },
  });
  return rows.map((row) => ({ id: row.id, revokedAt: row.revokedAt, expiresAt: row.expiresAt, actor: { userId: row.user.id, name: row.user.name, role: row.user.role } }));
}
