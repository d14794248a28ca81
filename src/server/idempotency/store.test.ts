/**
 * The keys' store against the unit database (a new SQLite file, migrated by the project's runner): what
 * sweeping leaves on disk.
 */
import { describe, expect, it } from 'vitest';

import { db } from '@/server/db/client';
import { BODY_LIMIT_BYTES } from '@/shared/limits';
import { signIn } from '@test-support/actors';

import { runInSlices, type SliceResult, sliceSizer, type Step } from '@/server/background/slices';
import { returnFreePages } from '@/server/db/sqlite-vacuum';

import { sweepExpiredKeys } from './store';

const pragma = async (name: string) => Number(Object.values((await db.$queryRawUnsafe<Record<string, unknown>[]>(`PRAGMA ${name}`))[0]!)[0]);

describe('sweeping expired keys', () => {
  // 16 MB written and given back: ~1 s on an idle machine, 10.7 s under a parallel browser build (the 5 s
  // default was a clock, not a bound against a hang).
  it('gives the space of what it deleted back to the file system (a new file is in incremental auto-vacuum mode)', { timeout: 60_000 }, async () => {
    expect(await pragma('auto_vacuum')).toBe(2);
    const { context } = await signIn('store-sweeper');
    const userId = context.auth.status === 'signedIn' ? context.auth.actor.userId : -1;
    const longAgo = new Date(Date.now() - 2 * 24 * 3_600_000);
    // 16 MB of answers past their 24 hours, as the unbounded 400s of unknown fields used to be.
    for (let batch = 0; batch < 8; batch++) {
      await db.idempotencyKey.createMany({
        data: Array.from({ length: 32 }, (_, index) => ({
          userId,
          key: `expired-${batch}-${index}`,
          fingerprint: 'f',
          status: 400,
          response: 'x'.repeat(BODY_LIMIT_BYTES),
          lockedUntil: longAgo,
          createdAt: longAgo,
          expiresAt: new Date(longAgo.getTime() + 1_000),
        })),
      });
    }
    const pageSize = await pragma('page_size');
    const pagesBefore = await pragma('page_count');
    const started = performance.now();
    const slices: { result: SliceResult; ms: number }[] = [];
    const inSlices = (step: Step) => runInSlices(step, { sizer: sliceSizer({ initial: 16, max: 1_024 }), stopped: () => false, onSlice: (result, ms) => slices.push({ result, ms }) });
    expect(await inSlices((size) => sweepExpiredKeys(size))).toBe(256);
    // Every slice deletes at most its size, though the 256 keys expired at the same instant.
    expect(slices.every(({ result }) => result.done <= 1_024)).toBe(true);
    expect(slices[0]!.result.done).toBe(16);
    await inSlices(returnFreePages);
    console.log(`swept 16 MB and gave it back in ${(performance.now() - started).toFixed(0)} ms, ${slices.length} slices, the longest ${Math.max(...slices.map(({ ms }) => ms)).toFixed(1)} ms`);
    expect(await pragma('freelist_count')).toBe(0);
    const freedBytes = (pagesBefore - (await pragma('page_count'))) * pageSize;
    expect(freedBytes).toBeGreaterThan(15 * 1024 * 1024);
    // Writing and giving back 16 MB takes a few seconds when the machine is busy: beyond Vitest's default 5 s.
  });
});
