import { describe, expect, it } from 'vitest';

import { NO_CONTROL_CHARACTERS } from './control-characters';

describe('NO_CONTROL_CHARACTERS, the pattern the document declares for names, tags and descriptions', () => {
  const byUnicodeClass = /^\P{Cc}*$/u;
  // As the OpenAPI document carries it (JSON text), and as validators compile it: with and without Unicode support.
  const documented = JSON.parse(JSON.stringify(NO_CONTROL_CHARACTERS.source)) as string;
  const readers = { 'with the u flag': new RegExp(documented, 'u'), 'without it': new RegExp(documented) };

  it('is written without \\p classes', () => {
    expect(documented).not.toMatch(/\\[pP]/);
  });

  for (const [how, reader] of Object.entries(readers)) {
    it(`matches exactly the code points ^\\P{Cc}*$ matches, read ${how}`, () => {
      const differing: string[] = [];
      for (let codePoint = 0; codePoint <= 0x10ffff; codePoint++) {
        const text = String.fromCodePoint(codePoint);
        if (reader.test(text) !== byUnicodeClass.test(text)) differing.push(`U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`);
      }
      expect(differing.slice(0, 20), `${differing.length} code points differ`).toEqual([]);
    });

    it(`judges text the same way, read ${how}`, () => {
      for (const text of ['', 'Monstera deliciosa', 'Straße 🌿 ok', 'tab\there', 'bell\u0007', 'nel\u0085', 'del\u007f', '\u00a0no-break', '\u200b\u2028\u2029', '😀\u009f']) {
        expect(reader.test(text), JSON.stringify(text)).toBe(byUnicodeClass.test(text));
      }
    });
  }
});
