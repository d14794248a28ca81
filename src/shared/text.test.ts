import { describe, expect, it } from 'vitest';

import { withoutTrailingSlashes } from './text';

describe('withoutTrailingSlashes', () => {
  it('cuts every slash the text ends with, and nothing else', () => {
    expect(withoutTrailingSlashes('/admin//')).toBe('/admin');
    expect(withoutTrailingSlashes('/admin')).toBe('/admin');
    expect(withoutTrailingSlashes('https://plants.example.com/')).toBe('https://plants.example.com');
    expect(withoutTrailingSlashes('///')).toBe('');
    expect(withoutTrailingSlashes('')).toBe('');
  });

  it('takes linear time on the input that made /\\/+$/ quadratic', () => {
    const hostile = `${'/'.repeat(1_000_000)}a`;
    const started = performance.now();
    expect(withoutTrailingSlashes(hostile)).toBe(hostile);
    // The pattern needed minutes for this; one pass takes about a millisecond, even on a loaded machine.
    expect(performance.now() - started).toBeLessThan(500);
  });
});
