import { type AuthState, authFailure } from '@/server/auth/auth-state';
import { resolveBearer } from '@/server/tokens/bearer';
import type { Logger } from '@/server/log';
import { authenticationFailures, rateLimitRefusals, sharedBudgetCalls } from '@/server/observability/metrics';
import { bodyUnits } from '@/shared/limits';

import { type FrontRequest, repeatedHeader } from '../request';
import { Refusal, refuse } from '../reply';

import { addressGroup } from './client-address';
import { createRateLimiter, createSharedRateLimiter, type RateDecision, type RateLimiter, type RateLimitPolicy, type SharedBudget } from './rate-limit';

const AUTHORIZATION = new Set(['authorization']);

export type AuthGuardOptions = {
  /** Requests per token, and requests with an invalid token per client address; null turns one off. */
  perToken: RateLimitPolicy | null;
  authFailuresPerAddress: RateLimitPolicy | null;
  /**
   * The budgets every instance shares (PostgreSQL: db/rate-budget.ts), for each of the two limits; without it
   * (SQLite) the buckets are this process's own.
   */
  sharedBudget?: (kind: 'token' | 'address', policy: RateLimitPolicy) => SharedBudget;
  /** Where a shared budget that stops answering (and answers again) is told. */
  log?: Pick<Logger, 'warn' | 'info'>;
};

/** The limiter of one policy: shared by the instances where a shared budget is given, else this process's. */
function limiterFor(kind: 'token' | 'address', policy: RateLimitPolicy | null, options: AuthGuardOptions): RateLimiter | undefined {
  if (!policy) return undefined;
  if (!options.sharedBudget) return createRateLimiter(policy);
  let failing = false;
  return createSharedRateLimiter(policy, options.sharedBudget(kind, policy), {
    onCall(outcome, error) {
      sharedBudgetCalls.labels(outcome).inc();
      if (outcome === 'failed' && !failing) {
        options.log?.warn({ err: error, limiter: kind }, 'the shared rate-limit budget does not answer: this instance counts alone until it does');
      } else if (outcome !== 'failed' && failing) {
        options.log?.info({ limiter: kind }, 'the shared rate-limit budget answers again');
      }
      failing = outcome === 'failed';
    },
  });
}

function tooManyRequests(decision: Extract<RateDecision, { allowed: false }>, subject: string): Refusal {
  rateLimitRefusals.labels(subject === 'for this token' ? 'token' : 'address').inc();
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
 * A refused charge: the 429's sentence and headers (`Retry-After`, `RateLimit-*`), for a door to render, and
 * the exact wait until the units are there (a streamed export waits between batches instead of failing).
 */
export type ChargeRefused = { message: string; headers: Record<string, string>; retryAfterMs: number };

/**
 * Who a request speaks for, and whether they may ask now: one guard for both doors, so a token has one
 * bucket whichever door it uses, and invalid tokens from one address (an IPv6 address: its /64) drain one bucket. `cost` is the
 * number of calls the request makes (a tRPC batch makes several). Throws a 429 Refusal; a missing or
 * invalid token is left to the door, which answers 401 in its own format.
 *
 * A request does more than one call's work with a large body (`chargeForBody`, before it is parsed) or
 * with its input (a bulk delete, a long list, a name search): that is charged once the input is read,
 * through `chargeMore`, which the doors hand to the procedures in the context (`ctx.charge`). A call is
 * charged what it does, on whichever door (docs/api.md, "Rate limits: a call is charged what it does").
 */
export function createAuthGuard(options: AuthGuardOptions) {
  const perToken = limiterFor('token', options.perToken, options);
  const perAddress = limiterFor('address', options.authFailuresPerAddress, options);

  async function authenticate(request: FrontRequest, cost = 1): Promise<AuthState> {
    // Node keeps the first of two Authorization fields; a proxy may read the other, so neither counts. A token
    // accepted a moment ago is answered at once; only a lookup in the database is awaited.
    const resolved = repeatedHeader(request.raw.rawHeaders, AUTHORIZATION) ? ({ status: 'invalid' } as const) : resolveBearer(request.raw.headers.authorization);
    const auth: AuthState = resolved instanceof Promise ? await resolved : resolved;
    if (auth.status === 'signedIn') {
      request.trace.userId = auth.actor.userId;
      const taken = perToken?.(String(auth.tokenId), cost);
      const decision = taken instanceof Promise ? await taken : taken;
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'for this token');
    } else if (auth.status === 'invalid') {
      authenticationFailures.labels(request.trace.door ?? 'front').inc();
      const taken = perAddress?.(addressGroup(request.clientAddress));
      const decision = taken instanceof Promise ? await taken : taken;
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'with invalid tokens from this address');
    }
    return auth;
  }

  function chargeRefused(decision: RateDecision): ChargeRefused | undefined {
    if (decision.allowed) return undefined;
    const refusal = tooManyRequests(decision, 'for this token');
    return { message: refusal.problem.message, headers: refusal.headers, retryAfterMs: decision.retryAfterMs };
  }

  /**
   * Takes `units` more from a signed-in caller's bucket: undefined when they were there, else the refusal. At
   * once when this process decides alone or holds the units, else once the shared budget answered.
   */
  function chargeMore(auth: AuthState, units: number): ChargeRefused | undefined | Promise<ChargeRefused | undefined> {
    if (units <= 0 || auth.status !== 'signedIn' || !perToken) return undefined;
    const decision = perToken(String(auth.tokenId), units);
    return decision instanceof Promise ? decision.then(chargeRefused) : chargeRefused(decision);
  }

  /**
   * A body's cost, charged once it is read and before anything parses it: one unit per BODY_BYTES_PER_UNIT
   * beyond the first (the call's own unit covers that: `bodyUnits`). Rejects with a 429 Refusal.
   */
  async function chargeForBody(auth: AuthState, bytes: number): Promise<void> {
    const refused = await chargeMore(auth, bodyUnits(bytes));
    if (refused) throw refuse('tooManyRequests', refused.message, refused.headers);
  }

  return Object.assign(authenticate, { chargeMore, chargeForBody });
}

export type Authenticate = ReturnType<typeof createAuthGuard>;

const REALM = 'Bearer realm="plants"';

/**
 * The doors' 401 (REST and MCP alike), with the challenge of RFC 6750: `error="invalid_token"` when a token
 * was sent but is not valid.
 */
export function requireToken(auth: AuthState): asserts auth is Extract<AuthState, { status: 'signedIn' }> {
  if (auth.status === 'signedIn') return;
  const { kind, message } = authFailure(auth.status);
  throw refuse(kind, message, { 'WWW-Authenticate': auth.status === 'invalid' ? `${REALM}, error="invalid_token"` : REALM });
}
