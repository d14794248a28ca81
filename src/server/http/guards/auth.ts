import { type AuthState, resolveBearer } from '@/server/auth/bearer';

import { type FrontRequest, repeatedHeader } from '../request';
import { Refusal, refuse } from '../reply';

import { addressGroup } from './client-address';
import { createRateLimiter, type RateDecision, type RateLimitPolicy } from './rate-limit';

const AUTHORIZATION = new Set(['authorization']);

export type AuthGuardOptions = {
  /** Requests per token, and requests with an invalid token per client address; null turns one off. */
  perToken: RateLimitPolicy | null;
  authFailuresPerAddress: RateLimitPolicy | null;
};

function tooManyRequests(decision: Extract<RateDecision, { allowed: false }>, subject: string): Refusal {
  const seconds = String(decision.retryAfterSeconds);
  return refuse('tooManyRequests', `too many requests ${subject}; try again in ${seconds} s`, {
    'Retry-After': seconds,
    'RateLimit-Limit': String(decision.policy.burst),
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': seconds,
    'RateLimit-Policy': `${decision.policy.burst};w=${Math.ceil(decision.policy.burst / decision.policy.perSecond)}`,
  });
}

/**
 * Who a request speaks for, and whether they may ask now: one guard for both doors, so a token has one
 * bucket whichever door it uses, and invalid tokens from one address (an IPv6 address: its /64) drain one bucket. `cost` is the
 * number of calls the request makes (a tRPC batch makes several). Throws a 429 Refusal; a missing or
 * invalid token is left to the door, which answers 401 in its own format.
 */
export function createAuthGuard(options: AuthGuardOptions) {
  const perToken = options.perToken ? createRateLimiter(options.perToken) : undefined;
  const perAddress = options.authFailuresPerAddress ? createRateLimiter(options.authFailuresPerAddress) : undefined;

  return async function authenticate(request: FrontRequest, cost = 1): Promise<AuthState> {
    // Node keeps the first of two Authorization fields; a proxy may read the other, so neither counts.
    const auth: AuthState = repeatedHeader(request.raw.rawHeaders, AUTHORIZATION) ? { status: 'invalid' } : await resolveBearer(request.raw.headers.authorization);
    if (auth.status === 'signedIn') {
      request.trace.userId = auth.actor.userId;
      const decision = perToken?.(String(auth.tokenId), cost);
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'for this token');
    } else if (auth.status === 'invalid') {
      const decision = perAddress?.(addressGroup(request.clientAddress));
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'with invalid tokens from this address');
    }
    return auth;
  };
}

export type Authenticate = ReturnType<typeof createAuthGuard>;
