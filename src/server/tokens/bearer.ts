import 'server-only';

import type { AuthState } from '@/server/auth/auth-state';

import { checkTokenAtOnce, type TokenCheck, verifyToken } from './service';

/** `Bearer <token>`, the scheme word in any case (RFC 6750 with RFC 9110's case-insensitive schemes). */
const BEARER = /^bearer(?: (.*))?$/i;

/** The token of a `Bearer` header: undefined for another scheme or none, '' for `Bearer` with no token. */
function bearerToken(authorization: string | null | undefined): string | undefined {
  const match = authorization ? BEARER.exec(authorization.trim()) : null;
  return match ? (match[1]?.trim() ?? '') : undefined;
}

function stateOf(check: TokenCheck): AuthState {
  return check.ok ? { status: 'signedIn', actor: check.actor, tokenId: check.tokenId } : { status: 'invalid' };
}

/**
 * Who an Authorization header speaks for when that needs no database: no token (another scheme counts as
 * none: a plain challenge follows), a token refused by its form, or one accepted a moment ago (the cache).
 * Undefined when the token must be looked up: `resolveBearer`. Synchronous, for the doors' guard.
 */
export function resolveBearerAtOnce(authorization: string | null | undefined): AuthState | undefined {
  const token = bearerToken(authorization);
  if (token === undefined) return { status: 'missing' };
  if (!token) return { status: 'invalid' };
  const check = checkTokenAtOnce(token);
  return check && stateOf(check);
}

/**
 * Who an Authorization header speaks for. Another scheme counts as no token (a plain challenge follows);
 * `Bearer` with a token that is not valid is `invalid` (the failed-authentication limit counts those).
 */
export async function resolveBearer(authorization: string | null | undefined): Promise<AuthState> {
  const token = bearerToken(authorization);
  if (token === undefined) return { status: 'missing' };
  if (!token) return { status: 'invalid' };
  return stateOf(await verifyToken(token));
}
