import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { semiSpaceGrowthFactor } from './heap';

const heapModule = fileURLToPath(new URL('./heap.ts', import.meta.url));

/**
 * A fresh node (V8's heap is set up once per process) that calls keepHeapSmall, then allocates short-lived
 * objects between event-loop turns as requests do, and answers the largest young generation (both semi-spaces,
 * MB) it saw.
 */
async function youngGenerationMb(nodeFlags: string[], callIt = true): Promise<number> {
  const script = `
    import v8 from 'node:v8';
    import { keepHeapSmall } from ${JSON.stringify(heapModule)};
    if (${callIt}) keepHeapSmall();
    let kept = [];
    let largest = 0;
    for (let turn = 0; turn < 150; turn++) {
      for (let i = 0; i < 20000; i++) {
        kept.push({ i, name: 'plant ' + i });
        if (kept.length > 20000) kept = [];
      }
      largest = Math.max(largest, v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size);
      await new Promise((resolve) => setImmediate(resolve));
    }
    console.log(largest / 1024 / 1024);
  `;
  const { stdout } = await promisify(execFile)(process.execPath, [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return Number(stdout.trim());
}

describe('keepHeapSmall', () => {
  it('stops the young generation at two 12 MB semi-spaces, where V8 alone grows it to 2 × 16 MB', async () => {
    expect(await youngGenerationMb([], false)).toBe(32);
    expect(await youngGenerationMb([])).toBe(24);
  });

  it('leaves the young generation to a --max-semi-space-size given on the command line', async () => {
    expect(await youngGenerationMb(['--max-semi-space-size=16'])).toBe(32);
  });
});

describe('semiSpaceGrowthFactor', () => {
  // A semi-space of each size, as V8 may leave it after it shrinks the young generation, and the 12 MB cap.
  it.each([
    [1, 12],
    [4.25, 2],
    [6.25, 1],
    [7.5, 1],
    [8, 1],
    [12, 1],
  ])('grows a %s MB semi-space by %s: never past the cap, never below 1', (semiSpaceMb, factor) => {
    expect(semiSpaceGrowthFactor(12, semiSpaceMb)).toBe(factor);
    expect(semiSpaceMb * factor).toBeLessThanOrEqual(12);
  });

  it('leaves a semi-space already past the cap where it is (1: no growth)', () => {
    expect(semiSpaceGrowthFactor(12, 16)).toBe(1);
  });
});
