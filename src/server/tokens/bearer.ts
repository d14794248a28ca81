import 'server-only';

import type { AuthState } from '@/server/auth/auth-state';

import { checkToken, type TokenCheck } from './service';

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
 * Who an Authorization header speaks for. Another scheme counts as no token (a plain challenge follows);
 * `Bearer` with a token that is not valid is `invalid` (the failed-authentication limit counts those). At
 * once when that needs no database (no token, a token refused by its form, one accepted a moment ago: the
 * cache), a promise when the token is looked up (tokens/service.ts, `checkToken`).
 */
export function resolveBearer(authorization: string | null | undefined): AuthState | Promise<AuthState> {
  const token = bearerToken(authorization);
  if (token === undefined) return { status: 'missing' };
  if (!token) return { status: 'invalid' };
  const check = checkToken(token);
  return check instanceof Promise ? check.then(stateOf) : stateOf(check);
}
