/** A token bucket: `burst` requests at once, refilled at `perSecond`. */
export type RateLimitPolicy = { burst: number; perSecond: number };

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; policy: RateLimitPolicy };

/**
 * Token buckets per key (a token, a client address), in memory. Memory is bounded: past `maxKeys` the
 * least recently used bucket is dropped, which can only ever let a request through, never refuse one.
 * Several instances each keep their own buckets, so the limit a client meets is per instance.
 */
export function createRateLimiter(policy: RateLimitPolicy, options: { maxKeys?: number; now?: () => number } = {}) {
  const { maxKeys = 10_000, now = () => performance.now() } = options;
  const buckets = new Map<string, { tokens: number; updatedAt: number }>();

  return function take(key: string): RateDecision {
    const time = now();
    const previous = buckets.get(key);
    const refilled = previous
      ? Math.min(policy.burst, previous.tokens + ((time - previous.updatedAt) / 1000) * policy.perSecond)
      : policy.burst;
    // Re-inserting keeps the Map in least-recently-used order for the eviction below.
    buckets.delete(key);
    if (refilled < 1) {
      buckets.set(key, { tokens: refilled, updatedAt: time });
      return { allowed: false, retryAfterSeconds: Math.ceil((1 - refilled) / policy.perSecond), policy };
    }
    buckets.set(key, { tokens: refilled - 1, updatedAt: time });
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return { allowed: true };
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/** `BURST/PER_SECOND` from the environment, e.g. `600/100`; `off` (or 0) turns the limit off. */
export function policyFromEnvironment(value: string | undefined, fallback: RateLimitPolicy): RateLimitPolicy | null {
  if (value === undefined || value.trim() === '') return fallback;
  if (/^(off|0)$/i.test(value.trim())) return null;
  const match = /^\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (!match || Number(match[1]) < 1 || Number(match[2]) <= 0) {
    throw new Error(`rate limit "${value}" is not BURST/PER_SECOND (e.g. 600/100) or off`);
  }
  return { burst: Number(match[1]), perSecond: Number(match[2]) };
}
