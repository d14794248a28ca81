import 'server-only';

import type { AuthState } from '@/server/auth/auth-state';

import { verifyToken } from './service';

/** `Bearer <token>`, the scheme word in any case (RFC 6750 with RFC 9110's case-insensitive schemes). */
const BEARER = /^bearer(?: (.*))?$/i;

/**
 * Who an Authorization header speaks for. Another scheme counts as no token (a plain challenge follows);
 * `Bearer` with a token that is not valid is `invalid` (the failed-authentication limit counts those).
 */
export async function resolveBearer(authorization: string | null | undefined): Promise<AuthState> {
  const match = authorization ? BEARER.exec(authorization.trim()) : null;
  if (!match) return { status: 'missing' };
  const token = match[1]?.trim();
  if (!token) return { status: 'invalid' };
  const check = await verifyToken(token);
  return check.ok ? { status: 'signedIn', actor: check.actor, tokenId: check.tokenId } : { status: 'invalid' };
}
