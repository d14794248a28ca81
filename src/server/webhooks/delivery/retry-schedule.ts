import { WEBHOOK_DISABLE_AFTER_FACTOR, WEBHOOK_MAX_BACKOFF_FACTOR, WEBHOOK_RETRY_WINDOW_FACTOR } from '@/shared/limits';

/**
 * The retry schedule, all of it scaled by one number, WEBHOOKS_RETRY_BASE_MS (30 s by default; tests
 * shrink it). After the n-th failed attempt the next waits base × 2^(n−1), at most base × 512, each wait
 * varied by ±20 % (jitter, so endpoints that failed together do not retry together). At the default:
 * 30 s, 1 min, 2 min, 4 min, … 4 h 16 min, then every 4 h 16 min.
 *
 * A delivery is retried until base × 2880 (24 h) have passed since its event, then marked failed; its
 * last attempt is the first one due after that. An endpoint whose attempts have failed for base × 14400
 * (5 days) without a single success is disabled. The numbers are in shared/limits.ts.
 */
const JITTER = 0.2;

/** The wait after `failedAttempts` (≥ 1) failures in a row. */
export function retryDelayMs(failedAttempts: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(baseMs * 2 ** Math.max(0, failedAttempts - 1), baseMs * WEBHOOK_MAX_BACKOFF_FACTOR);
  return Math.max(1, Math.round(exponential * (1 - JITTER + 2 * JITTER * random())));
}

export const retryWindowMs = (baseMs: number) => baseMs * WEBHOOK_RETRY_WINDOW_FACTOR;
export const disableAfterMs = (baseMs: number) => baseMs * WEBHOOK_DISABLE_AFTER_FACTOR;
