/** A token bucket: `burst` requests at once, refilled at `perSecond`. */
export type RateLimitPolicy = { burst: number; perSecond: number };

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number; retryAfterMs: number; policy: RateLimitPolicy };

/**
 * Takes `cost` units for `key` (a tRPC batch of n calls costs n, a bulk delete its ids), all or none. A cost
 * above the burst takes the whole burst: otherwise it could never pass. Decided at once where this process can
 * decide alone, else once the budget the instances share has answered.
 */
export type RateLimiter = (key: string, cost?: number) => RateDecision | Promise<RateDecision>;

const ALLOWED: RateDecision = { allowed: true };

function refused(policy: RateLimitPolicy, missingUnits: number): RateDecision {
  const waitMs = (missingUnits / policy.perSecond) * 1000;
  return { allowed: false, retryAfterSeconds: Math.ceil(waitMs / 1000), retryAfterMs: Math.ceil(waitMs), policy };
}

/**
 * Token buckets per key (a token, a client address), in memory. Memory is bounded: past `maxKeys` the
 * least recently used bucket is dropped, which can only ever let a request through, never refuse one.
 * The limit a client meets is this process's own: SQLite's, and every instance's while the shared budget
 * does not answer (`createSharedRateLimiter`).
 */
export function createRateLimiter(policy: RateLimitPolicy, options: { maxKeys?: number; now?: () => number } = {}) {
  const { maxKeys = 10_000, now = () => performance.now() } = options;
  const buckets = new Map<string, { tokens: number; updatedAt: number }>();

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
      return refused(policy, cost - refilled);
    }
    buckets.set(key, { tokens: refilled - cost, updatedAt: time });
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
    return ALLOWED;
  };
}

/**
 * One take from a budget every instance shares (a row in PostgreSQL: db/rate-budget.ts): `want` whole units
 * when they are there, else as many as are there when that is at least `need`, else none; and the level the
 * budget was left at.
 */
export type BudgetGrant = { granted: number; level: number };
export type SharedBudget = (key: string, need: number, want: number) => Promise<BudgetGrant>;

/**
 * The most units of a token's budget an instance holds: 1/25 of the burst (24 of the default 600), at least one.
 * It tops its units up to a slice when they fall to half of one, in the background, so requests rarely wait
 * for a call; it never holds more than a slice, so with N instances a token gets at most burst + N × slice at
 * once (docs/configuration.md).
 */
export const SLICES_PER_BURST = 25;
export const sliceOf = (policy: RateLimitPolicy): number => Math.max(1, Math.ceil(policy.burst / SLICES_PER_BURST));

/** How long a take waits for the shared budget before this process decides alone, and for how long it then does. */
export const SHARED_BUDGET_TIMEOUT_MS = 1_000;
export const ALONE_AFTER_FAILURE_MS = 1_000;

export type SharedRateLimiterOptions = {
  slice?: number;
  timeoutMs?: number;
  aloneForMs?: number;
  maxKeys?: number;
  now?: () => number;
  /** Each call to the shared budget, as it ends: what it gave, or that it failed (and why). */
  onCall?: (outcome: 'granted' | 'refused' | 'failed', error?: unknown) => void;
};

/** What this process holds of one key's shared budget. */
type Held = {
  /** Units taken from the shared budget and not spent yet: never more than a slice. */
  units: number;
  /**
   * The shared budget's level after this process's last call, sent at `levelAt`. The budget only refills
   * at the policy's rate and other instances only take from it, so `level` plus the refill since `levelAt` is
   * the most it can hold now: a request that needs more is refused here, without a call.
   */
  level: number;
  levelAt: number;
  /** The call in flight for this key: one at a time; a request its units do not cover waits for it. */
  asking?: Promise<number | undefined>;
  /**
   * The units the requests waiting for `asking` need. The next call asks for them too, so a crowd that
   * arrived during one call is served by the next, not a slice per call.
   */
  waiting: number;
};

/**
 * The calls a request waits for at most: the one out when it arrives, and the next, which asks for its units.
 * One still not covered then is refused: the budget had less than the crowd needed.
 */
const MOST_CALLS_WAITED = 2;

/**
 * A budget per key shared by every instance, spent here a slice at a time. A request that this process's
 * units cover is decided at once, without a round trip; when that leaves half a slice or less, one call in the
 * background tops the units up to a slice (most requests: no call, and none waits for one). A request the
 * units do not cover asks for what it lacks and the rest of a slice, one call per key at a time: requests that
 * arrive meanwhile wait, and the next call asks for all they need, so each waits for two calls at most (a slice
 * per call would make the last of a crowd of 200 wait for 16). One the shared budget cannot cover, by what
 * this process last learnt of its level, is refused at once. So a flood from one token costs the database at
 * most one call per unit the token is granted (its refill rate), however many requests it sends.
 *
 * The database slow or down: a call unanswered within `timeoutMs`, or failed, makes this process decide
 * alone (`createRateLimiter`, the policy per instance) for `aloneForMs`, then one call tries again. A request
 * never waits longer than two calls' `timeoutMs` here, and never passes unlimited: at worst each instance
 * grants its own burst, as separate instances did.
 */
export function createSharedRateLimiter(policy: RateLimitPolicy, budget: SharedBudget, options: SharedRateLimiterOptions = {}): RateLimiter {
  const {
    slice = sliceOf(policy),
    timeoutMs = SHARED_BUDGET_TIMEOUT_MS,
    aloneForMs = ALONE_AFTER_FAILURE_MS,
    maxKeys = 10_000,
    now = () => performance.now(),
    onCall = () => {},
  } = options;
  const lowWater = Math.floor(slice / 2);
  const alone = createRateLimiter(policy, { maxKeys, now });
  const held = new Map<string, Held>();
  /** When the shared budget last failed; while the process decides alone, one call at a time tries it again. */
  let failedAt: number | undefined;
  let probing = false;

  function heldFor(key: string): Held {
    let entry = held.get(key);
    if (entry) {
      // Re-inserting keeps the Map in least-recently-used order; dropping an entry only forgets units.
      held.delete(key);
    } else {
      entry = { units: 0, level: Number.POSITIVE_INFINITY, levelAt: 0, waiting: 0 };
    }
    held.set(key, entry);
    if (held.size > maxKeys) held.delete(held.keys().next().value!);
    return entry;
  }

  /** The most the shared budget can hold now, by this process's last call. */
  const mostThere = (entry: Held) => Math.min(policy.burst, entry.level + ((now() - entry.levelAt) / 1000) * policy.perSecond);

  /**
   * One call for `need` to `want` units. Resolves to what it granted (the caller adds it to the units before
   * anything waiting on `asking` runs: its reaction comes first), or undefined when it failed.
   */
  function call(key: string, entry: Held, need: number, want: number, probe: boolean): Promise<number | undefined> {
    if (probe) probing = true;
    const sentAt = now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the shared rate-limit budget did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    const asking = Promise.race([budget(key, need, want), timeout])
      .then(
        ({ granted, level }) => {
          failedAt = undefined;
          onCall(granted > 0 ? 'granted' : 'refused');
          entry.level = level;
          entry.levelAt = sentAt;
          return granted;
        },
        (error: unknown) => {
          // Units granted after the timeout are not counted here: the budget only loses them.
          failedAt = now();
          onCall('failed', error);
          return undefined;
        },
      )
      .finally(() => {
        clearTimeout(timer);
        entry.asking = undefined;
        if (probe) probing = false;
      });
    entry.asking = asking;
    return asking;
  }

  /** Tops the units up to a slice, and what the waiting requests need, in the background, when the shared budget can have a unit. */
  function topUp(key: string, entry: Held, probe: boolean): void {
    if (entry.asking || mostThere(entry) < 1) return;
    void call(key, entry, 1, slice - entry.units + entry.waiting, probe).then((granted) => {
      if (granted) entry.units += granted;
    });
  }

  /** A request the units do not cover: they go towards it and no other while its call is out. */
  function ask(key: string, entry: Held, cost: number, probe: boolean): Promise<RateDecision> {
    const reserved = entry.units;
    entry.units = 0;
    const need = cost - reserved;
    return call(key, entry, need, Math.max(need, slice - reserved) + entry.waiting, probe).then((granted) => {
      entry.units += reserved;
      if (granted === undefined) return alone(key, cost);
      if (granted < need) return refused(policy, need - entry.level);
      entry.units += granted - cost;
      return ALLOWED;
    });
  }

  function take(key: string, requested = 1, callsWaited = 0): RateDecision | Promise<RateDecision> {
    const cost = Math.min(requested, policy.burst);
    if (cost <= 0) return ALLOWED;
    const probe = failedAt !== undefined;
    if (probe && (probing || now() - failedAt! < aloneForMs)) return alone(key, requested);
    const entry = heldFor(key);
    if (entry.units >= cost) {
      entry.units -= cost;
      if (entry.units <= lowWater) topUp(key, entry, probe);
      return ALLOWED;
    }
    const need = cost - entry.units;
    if (callsWaited >= MOST_CALLS_WAITED) return refused(policy, need);
    if (entry.asking) {
      const waitingFor = entry;
      waitingFor.waiting += cost;
      return entry.asking.then(() => {
        waitingFor.waiting -= cost;
        return take(key, requested, callsWaited + 1);
      });
    }
    const most = mostThere(entry);
    if (most < need) return refused(policy, need - most);
    return ask(key, entry, cost, probe);
  }
  return (key, requested) => take(key, requested);
}
