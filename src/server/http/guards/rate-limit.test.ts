import { describe, expect, it } from 'vitest';

import { createRateLimiter } from './rate-limit';

describe('rate limiter', () => {
  it('allows a burst, then refills at the given rate', () => {
    let time = 0;
    const take = createRateLimiter({ burst: 3, perSecond: 2 }, { now: () => time });
    expect([take('a'), take('a'), take('a')].every((decision) => decision.allowed)).toBe(true);
    expect(take('a')).toEqual({ allowed: false, retryAfterSeconds: 1, retryAfterMs: expect.any(Number), policy: { burst: 3, perSecond: 2 } });
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

  it('charges a batch its number of calls, all or nothing', () => {
    let time = 0;
    const take = createRateLimiter({ burst: 10, perSecond: 1 }, { now: () => time });
    expect(take('a', 8).allowed).toBe(true);
    expect(take('a', 3)).toEqual({ allowed: false, retryAfterSeconds: 1, retryAfterMs: expect.any(Number), policy: { burst: 10, perSecond: 1 } });
    expect(take('a', 2).allowed).toBe(true);
    time += 3_000;
    expect(take('a', 3).allowed).toBe(true);
    expect(take('a', 1).allowed).toBe(false);
  });

  it('charges a cost above the burst the whole burst, so a call that costs more than the burst can still pass', () => {
    let time = 0;
    const take = createRateLimiter({ burst: 50, perSecond: 10 }, { now: () => time });
    expect(take('a', 100).allowed).toBe(true);
    expect(take('a', 1)).toEqual({ allowed: false, retryAfterSeconds: 1, retryAfterMs: expect.any(Number), policy: { burst: 50, perSecond: 10 } });
    time += 2_000;
    expect(take('a', 100)).toEqual({ allowed: false, retryAfterSeconds: 3, retryAfterMs: expect.any(Number), policy: { burst: 50, perSecond: 10 } });
    time += 3_000;
    expect(take('a', 100).allowed).toBe(true);
  });
});
