import { describe, expect, it } from 'vitest';

import { createRateLimiter, createSharedRateLimiter, type RateLimitPolicy, type SharedBudget, sliceOf } from './rate-limit';

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

/**
 * The budget every instance shares, as the database keeps it (migration *_shared_rate_budget, whose SQL the API
 * suite runs on a real PostgreSQL in e2e/api/instances.test.ts): what the slices do around it is what is tested here.
 */
function sharedBudget(policy: RateLimitPolicy, clock: () => number) {
  const rows = new Map<string, { tokens: number; at: number }>();
  const calls: { key: string; need: number; want: number }[] = [];
  let grantedInAll = 0;
  const budget: SharedBudget = async (key, need, want) => {
    calls.push({ key, need, want });
    const row = rows.get(key) ?? { tokens: policy.burst, at: clock() };
    const level = Math.min(policy.burst, row.tokens + ((clock() - row.at) / 1000) * policy.perSecond);
    const granted = level >= need ? Math.min(want, Math.floor(level)) : 0;
    grantedInAll += granted;
    rows.set(key, { tokens: level - granted, at: clock() });
    return { granted, level: level - granted };
  };
  return { budget, calls, granted: () => grantedInAll };
}

describe('shared rate limiter', () => {
  it('takes a slice at a time, topped up in the background: most requests make no call, and only the first waits for one', async () => {
    const time = 0;
    const { budget, calls } = sharedBudget({ burst: 600, perSecond: 100 }, () => time);
    const take = createSharedRateLimiter({ burst: 600, perSecond: 100 }, budget, { now: () => time });
    expect(sliceOf({ burst: 600, perSecond: 100 })).toBe(24);
    let waited = 0;
    for (let index = 0; index < 240; index++) {
      const decision = take('a');
      if (decision instanceof Promise) waited++;
      expect((await decision).allowed).toBe(true);
    }
    // The first call takes a slice; then a call tops it up each time half of it is spent.
    expect(calls.length).toBeLessThanOrEqual(1 + 240 / 12);
    expect(waited).toBe(1);
  });

  it('spends one budget from two instances: a burst spent on one is spent on the other', async () => {
    const time = 0;
    const policy = { burst: 20, perSecond: 0.001 };
    const { budget } = sharedBudget(policy, () => time);
    const [first, second] = [createSharedRateLimiter(policy, budget, { slice: 3, now: () => time }), createSharedRateLimiter(policy, budget, { slice: 3, now: () => time })];
    let servedFirst = 0;
    while ((await first!('a')).allowed) servedFirst++;
    // The first instance was granted the whole burst, a slice at a time, and spent it.
    expect(servedFirst).toBe(20);
    expect(await second!('a')).toEqual({ allowed: false, retryAfterSeconds: 1000, retryAfterMs: 1_000_000, policy });
  });

  it('never serves more than the burst and what each instance holds back, alternating or at once', async () => {
    const time = 0;
    const policy = { burst: 100, perSecond: 0.001 };
    const { budget, granted } = sharedBudget(policy, () => time);
    const slice = 7;
    const instances = [0, 1, 2].map(() => createSharedRateLimiter(policy, budget, { slice, now: () => time }));
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, index) => instances[index % 3]!('a', 1 + (index % 4))));
    const costs = decisions.map((decision, index) => (decision.allowed ? 1 + (index % 4) : 0));
    const spent = costs.reduce((sum, cost) => sum + cost, 0);
    expect(spent).toBeLessThanOrEqual(100);
    // Units granted to an instance and not spent stay there: at most a slice each.
    expect(spent).toBeGreaterThanOrEqual(100 - 3 * slice);
    expect(granted() - spent).toBeLessThanOrEqual(3 * slice);
  });

  it('never holds more than a slice of units between requests, whatever the costs', async () => {
    let time = 0;
    const policy = { burst: 1_000, perSecond: 1_000_000 };
    const { budget, granted } = sharedBudget(policy, () => time);
    const take = createSharedRateLimiter(policy, budget, { slice: 20, now: () => time });
    let spent = 0;
    for (let index = 0; index < 300; index++) {
      const cost = 1 + ((index * 7) % 13);
      time += 10;
      expect((await take('a', cost)).allowed).toBe(true);
      spent += cost;
      // Let a top-up in the background land.
      await new Promise((resolve) => setImmediate(resolve));
      expect(granted() - spent, `after request ${index}`).toBeLessThanOrEqual(20);
    }
  });

  it('asks once at a time per key: requests that arrive during a call wait for it', async () => {
    const time = 0;
    const policy = { burst: 50, perSecond: 1 };
    const { budget: answer } = sharedBudget(policy, () => time);
    let inFlight = 0;
    let mostInFlight = 0;
    const budget: SharedBudget = async (key, need, want) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return answer(key, need, want);
    };
    const take = createSharedRateLimiter(policy, budget, { slice: 10, now: () => time });
    const decisions = await Promise.all(Array.from({ length: 40 }, () => take('a')));
    expect(decisions.every((decision) => decision.allowed)).toBe(true);
    expect(mostInFlight).toBe(1);
  });

  it('decides a crowd of one token’s requests within two calls to a slow budget, however many arrive at once', async () => {
    // A budget that answers in 5 ms, while its clock runs: each call refills half a unit, so a crowd could be
    // fed a few units a call for ever. A request waits for the call out when it arrives and for one that counts
    // it, no more: the guard's wait is two calls' at most (SHARED_BUDGET_TIMEOUT_MS each).
    let time = 0;
    const policy = { burst: 600, perSecond: 100 };
    const { budget: answer, granted } = sharedBudget(policy, () => time);
    let answered = 0;
    const budget: SharedBudget = async (key, need, want) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      time += 5;
      answered++;
      return answer(key, need, want);
    };
    const take = createSharedRateLimiter(policy, budget, { now: () => time });
    let spent = 0;
    for (const crowd of [200, 700]) {
      const before = answered;
      const waits: number[] = [];
      const decisions = await Promise.all(
        Array.from({ length: crowd }, async () => {
          const decision = await take('a');
          waits.push(answered - before);
          return decision;
        }),
      );
      expect(Math.max(...waits), `a crowd of ${crowd}`).toBeLessThanOrEqual(2);
      const allowed = decisions.filter((decision) => decision.allowed).length;
      // The first crowd fits in the burst; the second gets what is left of it, no more.
      if (crowd === 200) expect(allowed).toBe(200);
      spent += allowed;
      expect(granted()).toBeLessThanOrEqual(policy.burst + (time / 1000) * policy.perSecond);
      // What the crowd's calls asked for on its behalf was spent by it: the instance holds a slice at most.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(granted() - spent).toBeLessThanOrEqual(sliceOf(policy));
    }
  });

  it('refuses a flood without a call until the budget can have refilled what a request needs', async () => {
    let time = 0;
    const policy = { burst: 10, perSecond: 2 };
    const { budget, calls } = sharedBudget(policy, () => time);
    const take = createSharedRateLimiter(policy, budget, { slice: 1, now: () => time });
    for (let index = 0; index < 10; index++) expect((await take('a')).allowed).toBe(true);
    expect((await take('a')).allowed).toBe(false);
    const callsWhenEmpty = calls.length;
    for (let index = 0; index < 1_000; index++) expect(take('a')).toMatchObject({ allowed: false });
    expect(calls).toHaveLength(callsWhenEmpty);
    // Half a second refills one unit: the next request asks, and gets it.
    time += 500;
    expect(await take('a')).toEqual({ allowed: true });
    expect(calls).toHaveLength(callsWhenEmpty + 1);
  });

  it('charges a cost above the burst the whole burst', async () => {
    const time = 0;
    const policy = { burst: 50, perSecond: 10 };
    const { budget } = sharedBudget(policy, () => time);
    const take = createSharedRateLimiter(policy, budget, { now: () => time });
    expect(await take('a', 100)).toEqual({ allowed: true });
    expect(await take('a', 1)).toMatchObject({ allowed: false, retryAfterMs: 100 });
  });

  it('decides alone, within its timeout, while the shared budget does not answer; then tries it again', async () => {
    let time = 0;
    const policy = { burst: 3, perSecond: 0.001 };
    let answering = false;
    const outcomes: string[] = [];
    const { budget: working } = sharedBudget(policy, () => time);
    const budget: SharedBudget = (key, need, want) => (answering ? working(key, need, want) : new Promise(() => {}));
    const take = createSharedRateLimiter(policy, budget, { timeoutMs: 30, aloneForMs: 1_000, now: () => time, onCall: (outcome) => outcomes.push(outcome) });
    const startedAt = performance.now();
    expect(await take('a')).toEqual({ allowed: true });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    expect(outcomes).toEqual(['failed']);
    // Alone, the policy still holds: the process's own burst of 3, no more.
    expect([take('a'), take('a'), take('a')].map((decision) => (decision as { allowed: boolean }).allowed)).toEqual([true, true, false]);
    expect(outcomes).toEqual(['failed']);
    answering = true;
    time += 1_000;
    expect(await take('b')).toEqual({ allowed: true });
    expect(outcomes).toEqual(['failed', 'granted']);
  });

  it('decides alone when the shared budget fails, and gives back the units it held for the request', async () => {
    const time = 0;
    const policy = { burst: 30, perSecond: 0.001 };
    const { budget: working } = sharedBudget(policy, () => time);
    let failing = false;
    const budget: SharedBudget = (key, need, want) => (failing ? Promise.reject(new Error('connection refused')) : working(key, need, want));
    const take = createSharedRateLimiter(policy, budget, { slice: 5, now: () => time });
    expect(await take('a')).toEqual({ allowed: true });
    failing = true;
    // Holds 4 units: a request of 6 asks, the call fails, and the 4 are held again.
    expect(await take('a', 6)).toEqual({ allowed: true });
    failing = false;
    expect(take('a', 4)).toEqual({ allowed: true });
  });
});
