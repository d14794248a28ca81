import { AppError } from '@/shared/errors';

import type { Actor } from './permissions';

/**
 * Who a request speaks for, as the front resolved it before either door runs (tokens/bearer.ts reads the
 * header). Here, beside the permissions, so the doors and the tRPC base know the outcome without knowing tokens.
 */
export type AuthState = { status: 'signedIn'; actor: Actor; tokenId: number } | { status: 'missing' } | { status: 'invalid' };

/** Why a request without a valid token is refused: the same words on both doors. */
export function authFailure(status: 'missing' | 'invalid'): AppError {
  return status === 'missing'
    ? new AppError('missingToken', 'a bearer token is required: send the header "Authorization: Bearer <token>"')
    : new AppError('invalidToken', 'the bearer token is not valid: it is unknown, revoked or expired');
}
