import { describe, expect, it } from 'vitest';

import { createRateLimiter, policyFromEnvironment } from './rate-limit';

describe('rate limiter', () => {
  it('allows a burst, then refills at the given rate', () => {
    let time = 0;
    const take = createRateLimiter({ burst: 3, perSecond: 2 }, { now: () => time });
    expect([take('a'), take('a'), take('a')].every((decision) => decision.allowed)).toBe(true);
    expect(take('a')).toEqual({ allowed: false, retryAfterSeconds: 1, policy: { burst: 3, perSecond: 2 } });
    time += 500;
    expect(take('a').allowed).toBe(true);
    expect(take('a').allowed).toBe(false);
    expect(take('b').allowed).toBe(true);
  });

  it('never holds more than maxKeys buckets, forgetting the least recently used', () => {
    const take = createRateLimiter({ burst: 1, perSecond: 0.001 }, { maxKeys: 2, now: () => 0 });
    take('a');
    take('b');
    expect(take('a').allowed).toBe(false);
    take('c');
    // 'b' was the least recently used, so it starts afresh; 'a' is still remembered.
    expect(take('b').allowed).toBe(true);
    expect(take('c').allowed).toBe(false);
  });

  it('reads BURST/PER_SECOND or off from the environment', () => {
    const fallback = { burst: 5, perSecond: 1 };
    expect(policyFromEnvironment(undefined, fallback)).toBe(fallback);
    expect(policyFromEnvironment('100/2.5', fallback)).toEqual({ burst: 100, perSecond: 2.5 });
    expect(policyFromEnvironment('off', fallback)).toBeNull();
    expect(policyFromEnvironment('0', fallback)).toBeNull();
    expect(() => policyFromEnvironment('lots', fallback)).toThrow(/BURST\/PER_SECOND/);
  });
});
