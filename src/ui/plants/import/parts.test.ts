import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { cutIntoParts } from './parts';

const jsonBytes = (text: string) => new TextEncoder().encode(JSON.stringify(text)).length - 2;
const lines = (text: string) => text.match(/\r\n|\r|\n/g)?.length ?? 0;

describe('an import file cut into parts', () => {
  it('gives back the whole text, each part within its lines and its bytes as JSON, whatever the text holds', () => {
    const unit = fc.constantFrom('a', 'é', '😀', ',', '"', '\\', '\r', '\n', '\r\n', '\u0001', ' ');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 400 }).map((units) => units.join('')), fc.integer({ min: 1, max: 20 }), fc.integer({ min: 8, max: 120 }), (text, maxLines, maxBytes) => {
        const parts = cutIntoParts(text, { maxLines, maxBytes });
        expect(parts.join('')).toBe(text);
        for (const part of parts) {
          expect(part).not.toBe('');
          expect(jsonBytes(part)).toBeLessThanOrEqual(maxBytes);
          expect(lines(part)).toBeLessThanOrEqual(maxLines);
          expect(part.isWellFormed()).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('cuts a 10,000-row export after whole lines, 1,000 a part', () => {
    const text = `id,name,tag\r\n${Array.from({ length: 10_000 }, (_, index) => `${index},Plant ${index},tag\r\n`).join('')}`;
    const parts = cutIntoParts(text);
    expect(parts).toHaveLength(11);
    expect(parts.every((part) => part.endsWith('\r\n'))).toBe(true);
    expect(parts.slice(0, 10).every((part) => lines(part) === 1_000)).toBe(true);
  });
});
