/**
 * How big V8 lets this server's heap grow, set from inside the process so `npm start`, `node dist/server.mjs`
 * and any supervisor get the same memory without flags a user must know about (the figures:
 * docs/performance.md, "Where the memory goes").
 *
 * V8 sizes its heap for a big machine: a young generation of 2 × 16 MB semi-spaces and an old generation
 * allowed to grow up to 4× what survived the last full collection. With ~30 MB of live objects that is
 * 170–230 MB of RSS under a steady list load, nearly all of it garbage not yet collected. Two settings:
 *
 * - **The old generation grows by 30 % after a full collection** (`--heap-growing-percent`, read at each
 *   collection, so it takes effect when set here). No cap: a surge still gets the heap it needs, where a
 *   `--max-old-space-size` would turn it into a fatal out-of-memory error. Measured free in CPU.
 * - **The young generation stops at 12 MB semi-spaces** (V8's default stops at 16). `--max-semi-space-size`
 *   is read only when the heap is set up, before any of our code runs, so setting it here does nothing. The
 *   growth factor is read each time the young generation grows, so it is steered instead: the factor that
 *   takes it from its present size as near the cap as one step goes without passing it (rounded down:
 *   semiSpaceGrowthFactor), then 1 (no growth). Checked after every collection, so it grows back after V8
 *   shrinks the young generation when the server goes idle (to the cap, or below it when the shrunk size does
 *   not divide it: never above).
 *   4 MB saved ~10 MB more than 8 but cost 16–20 % more CPU per request (more scavenges, more objects
 *   promoted); 12 MB takes ~12 µs per list off the collector against 8 MB (a quarter of its time) for ~10 MB,
 *   still under the memory goal; 16 MB went over it.
 *
 * A flag given on the command line or in NODE_OPTIONS wins: that setting is left alone.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const OLD_GENERATION_GROWING_PERCENT = 30;
const SEMI_SPACE_MB = 12;

export function keepHeapSmall(): void {
  const given = new Set(
    [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].map((arg) => arg.replace(/^--/, '').split('=')[0]!.replaceAll('_', '-')),
  );
  if (!given.has('heap-growing-percent') && !given.has('max-old-space-size')) {
    v8.setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWING_PERCENT}`);
  }
  if (!given.has('max-semi-space-size') && !given.has('semi-space-growth-factor') && !given.has('max-heap-size')) steerYoungGeneration(SEMI_SPACE_MB);
}

/**
 * The growth factor that takes a semi-space of `semiSpaceMb` as near the cap as one step goes without passing it:
 * rounded down, at least 1 (no growth). After V8 shrinks the young generation its size need not divide the cap,
 * and rounding to the nearest would pass it (6.25–8 MB rounded to 2: 12.5–16 MB, and 16 MB went over the memory goal).
 */
export function semiSpaceGrowthFactor(capMb: number, semiSpaceMb: number): number {
  return Math.max(1, Math.floor(capMb / semiSpaceMb));
}

function steerYoungGeneration(capMb: number): void {
  let factor = 0;
  const steer = () => {
    const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
    if (!newSpace) return;
    // What one semi-space holds: used plus available (space_size counts both semi-spaces once committed).
    const semiSpaceMb = (newSpace.space_used_size + newSpace.space_available_size) / 1024 / 1024;
    const next = semiSpaceGrowthFactor(capMb, semiSpaceMb);
    if (next === factor) return;
    factor = next;
    v8.setFlagsFromString(`--semi-space-growth-factor=${next}`);
  };
  steer();
  new PerformanceObserver(steer).observe({ entryTypes: ['gc'] });
}
