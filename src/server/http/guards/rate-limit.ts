/** A token bucket: `burst` requests at once, refilled at `perSecond`. */
export type RateLimitPolicy = { burst: number; perSecond: number };

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; retryAfterMs: number; policy: RateLimitPolicy };

/**
 * Token buckets per key (a token, a client address), in memory. Memory is bounded: past `maxKeys` the
 * least recently used bucket is dropped, which can only ever let a request through, never refuse one.
 * Several instances each keep their own buckets, so the limit a client meets is per instance.
 */
export function createRateLimiter(policy: RateLimitPolicy, options: { maxKeys?: number; now?: () => number } = {}) {
  const { maxKeys = 10_000, now = () => performance.now() } = options;
  const buckets = new Map<string, { tokens: number; updatedAt: number }>();

  /**
   * Takes `cost` requests' worth at once (a tRPC batch of n calls costs n, a bulk delete its ids), or none
   * when they are not all there. A cost above the burst takes the whole burst: otherwise it could never pass.
   */
  return function take(key: string, requested = 1): RateDecision {
    const cost = Math.min(requested, policy.burst);
    const time = now();
    const previous = buckets.get(key);
    const refilled = previous
      ? Math.min(policy.burst, previous.tokens + ((time - previous.updatedAt) / 1000) * policy.perSecond)
      : policy.burst;
    // Re-inserting keeps the Map in least-recently-used order for the eviction below.
    buckets.delete(key);
    if (refilled < cost) {
      buckets.set(key, { tokens: refilled, updatedAt: time });
      const waitMs = ((cost - refilled) / policy.perSecond) * 1000;
      return { allowed: false, retryAfterSeconds: Math.ceil(waitMs / 1000), retryAfterMs: Math.ceil(waitMs), policy };
    }
    buckets.set(key, { tokens: refilled - cost, updatedAt: time });
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return { allowed: true };
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
