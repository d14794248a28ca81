import 'server-only';

/**
 * What the admin page's heavy calls cost, in rows: a CSV export and the bulk changes read or write
 * thousands of rows for one request, which the per-request limit (RATE_LIMIT_PER_TOKEN) counts as one. Each
 * token has a budget of rows besides: ROW_BURST at once, refilled at ROW_RATE per second. A bulk call that
 * finds the budget short is refused with 429 and the seconds to wait; an export waits for it between
 * batches, so a huge export is slowed to the rate instead of cut off half-written. In memory, per
 * instance, like the request limit.
 */
export const ROW_BURST = 50_000;
export const ROW_RATE = 50_000;
const MAX_KEYS = 10_000;

const buckets = new Map<string, { rows: number; at: number }>();

function refilled(key: string, now: number): number {
  const previous = buckets.get(key);
  return previous ? Math.min(ROW_BURST, previous.rows + ((now - previous.at) / 1000) * ROW_RATE) : ROW_BURST;
}

function store(key: string, rows: number, now: number): void {
  buckets.delete(key);
  buckets.set(key, { rows, at: now });
  // The least recently used bucket goes first; dropping one can only let a call through, never refuse it.
  if (buckets.size > MAX_KEYS) buckets.delete(buckets.keys().next().value!);
}

/** Takes `rows` from the token's budget, or says how many whole seconds until they are there. */
export function takeRows(tokenKey: string, rows: number, now = performance.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
  const available = refilled(tokenKey, now);
  if (available >= rows) {
    store(tokenKey, available - rows, now);
    return { ok: true };
  }
  store(tokenKey, available, now);
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((Math.min(rows, ROW_BURST) - available) / ROW_RATE)) };
}

/** Waits until the token's budget has `rows`, then takes them (an export between two batches). */
export async function waitForRows(tokenKey: string, rows: number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    const taken = takeRows(tokenKey, rows);
    if (taken.ok) return;
    const missing = rows - refilled(tokenKey, performance.now());
    await new Promise((resolve) => setTimeout(resolve, Math.max(10, Math.ceil((missing / ROW_RATE) * 1000))));
    if (signal?.aborted) throw signal.reason;
  }
}
