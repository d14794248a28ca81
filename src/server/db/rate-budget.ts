import 'server-only';

import { db } from './client';

/** A policy as the budget needs it: the bucket's size and refill. */
type BudgetPolicy = { burst: number; perSecond: number };

/**
 * One take from the rate-limit budget every instance shares on PostgreSQL (migration *_shared_rate_budget:
 * one row per key, one function call, one row lock). `kind` keeps a token's budget and an address group's
 * apart in the one table. The guard calls this once per slice of units (http/guards/rate-limit.ts).
 */
export function sharedRateBudget(kind: 'token' | 'address', policy: BudgetPolicy) {
  const prefix = kind === 'token' ? 't:' : 'a:';
  return async (key: string, need: number, want: number): Promise<{ granted: number; level: number }> => {
    const [row] = await db.$queryRaw<{ granted: number; level: number }[]>`
      SELECT granted, level FROM take_rate_budget(${prefix + key}, ${policy.burst}::float8, ${policy.perSecond}::float8, ${need}::int, ${want}::int)`;
    return { granted: Number(row!.granted), level: Number(row!.level) };
  };
}

/** Rows the sweep deletes at most per statement. */
const SWEEP_ROWS = 5_000;

/**
 * Deletes the budgets that are full again (a row past its `fullAt` means the same as no row), a bounded number
 * per statement, and resolves to how many. The table holds only the keys used within the last burst's refill
 * time (6 s for a token at the default 600/100, 60 s for an address at 60/1).
 */
export async function sweepFullRateBudgets(): Promise<number> {
  let deleted = 0;
  for (;;) {
    const count = await db.$executeRaw`
      DELETE FROM "RateBudget" WHERE ctid IN (
        SELECT ctid FROM "RateBudget" WHERE "fullAt" < extract(epoch FROM clock_timestamp()) LIMIT ${SWEEP_ROWS}
      )`;
    deleted += count;
    if (count < SWEEP_ROWS) return deleted;
  }
}

/** Every minute on each instance (a sweep finds little: the rows of the last minute's keys). */
export function startRateBudgetSweep(options: { intervalMs?: number; onError: (error: unknown) => void }): { stop: () => void } {
  const timer = setInterval(() => void sweepFullRateBudgets().catch(options.onError), options.intervalMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
