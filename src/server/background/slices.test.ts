/**
 * The slices' own rules, with steps that only burn CPU or count: how a size follows what slices cost, that
 * the event loop turns between slices, and that every job shares one lane with a rest after each slice.
 */
import { describe, expect, it } from 'vitest';

import { runInSlices, SLICE_BUDGET_MS, type SliceResult, sliceSizer } from './slices';

const full = (size: number): SliceResult => ({ done: size, more: true });

/** Keeps the thread busy for `ms` of CPU time (a statement of better-sqlite3 holds it the same way). */
function burn(ms: number): void {
  const before = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe('a slice size', () => {
  it('doubles after two cheap full slices, up to the max, in powers of two', () => {
    const sizer = sliceSizer({ initial: 64, max: 256 });
    sizer.record(full(64), 1);
    expect(sizer.size).toBe(64);
    sizer.record(full(64), 1);
    expect(sizer.size).toBe(128);
    for (let slice = 0; slice < 10; slice++) sizer.record(full(sizer.size), 1);
    expect(sizer.size).toBe(256);
  });

  it('halves after two costly slices in a row, or one far over the budget, and never goes below 1', () => {
    const sizer = sliceSizer({ initial: 64, max: 1_024 });
    // One slow slice (a garbage collection, another process on the CPU) is not believed.
    sizer.record(full(64), SLICE_BUDGET_MS * 1.5);
    sizer.record(full(64), 1);
    sizer.record(full(64), SLICE_BUDGET_MS * 1.5);
    expect(sizer.size).toBe(64);
    sizer.record(full(64), SLICE_BUDGET_MS * 1.5);
    expect(sizer.size).toBe(32);
    sizer.record(full(32), SLICE_BUDGET_MS * 3);
    expect(sizer.size).toBe(16);
    for (let slice = 0; slice < 20; slice++) sizer.record(full(sizer.size), SLICE_BUDGET_MS * 3);
    expect(sizer.size).toBe(1);
  });

  it('stays where a slice costs between a third and two thirds of the budget, and learns nothing from a last, partial slice', () => {
    const sizer = sliceSizer({ initial: 64, max: 1_024 });
    for (let slice = 0; slice < 10; slice++) sizer.record(full(64), SLICE_BUDGET_MS / 2);
    expect(sizer.size).toBe(64);
    for (let slice = 0; slice < 10; slice++) sizer.record({ done: 3, more: false }, 1);
    expect(sizer.size).toBe(64);
  });
});

describe('running in slices', () => {
  it('lets the event loop turn between two slices, and follows the CPU a slice costs', async () => {
    let timersBetweenSlices = 0;
    let ticking = true;
    const tick = () => {
      timersBetweenSlices++;
      if (ticking) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const sizes: number[] = [];
    let left = 3_000;
    // Each unit costs 0.05 ms of CPU: 64 of them (3.2 ms) fit, 256 (12.8 ms) do not.
    const done = await runInSlices(
      async (size) => {
        sizes.push(size);
        const units = Math.min(size, left);
        burn(units * 0.05);
        left -= units;
        return { done: units, more: left > 0 };
      },
      { sizer: sliceSizer({ initial: 16, max: 1_024 }), stopped: () => false },
    );
    ticking = false;
    expect(done).toBe(3_000);
    // A timer set to fire at once ran between the slices: the loop was never held for the whole run.
    expect(timersBetweenSlices).toBeGreaterThanOrEqual(sizes.length - 1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(256);
    expect(sizes).toContain(64);
  });

  it('gives every job one lane: slices one at a time, each followed by a rest of at least the budget', async () => {
    const slices: { job: string; start: number; end: number }[] = [];
    const job = (name: string) =>
      runInSlices(
        async () => {
          const start = performance.now();
          burn(2);
          slices.push({ job: name, start, end: performance.now() });
          return { done: 1, more: slices.filter((slice) => slice.job === name).length < 5 };
        },
        { sizer: sliceSizer({ initial: 1, max: 1 }), stopped: () => false },
      );
    await Promise.all([job('a'), job('b')]);
    slices.sort((one, other) => one.start - other.start);
    expect(slices).toHaveLength(10);
    expect(new Set(slices.slice(0, 2).map((slice) => slice.job))).toEqual(new Set(['a', 'b']));
    for (let index = 1; index < slices.length; index++) {
      // Timers may fire a millisecond early by the performance clock's reading.
      expect(slices[index]!.start - slices[index - 1]!.end).toBeGreaterThanOrEqual(SLICE_BUDGET_MS - 1);
    }
  });

  it('stops between two slices when asked', async () => {
    let slices = 0;
    let stopped = false;
    const done = await runInSlices(
      async () => {
        slices++;
        if (slices === 3) stopped = true;
        return { done: 1, more: true };
      },
      { sizer: sliceSizer({ initial: 1, max: 1 }), stopped: () => stopped },
    );
    expect(done).toBe(3);
  });
});
