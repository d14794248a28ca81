/**
 * A small seeded generator (mulberry32) for tests that compare against a reference on generated inputs: a
 * failure names an input that comes again with the same seed. `random(seed)(below)` is an integer in [0, below).
 */
export function seededRandom(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below: number) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) % below;
  };
}
