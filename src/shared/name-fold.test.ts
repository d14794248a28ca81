import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { foldCodePoint } from '@/tooling/name-fold-table';
import { foldName } from '@test-support/fold-names';

import { foldForSearch, nameFoldTable } from './name-fold';
import { NAME_FOLD_UNICODE_VERSION } from './name-fold-table';
import { NAME_MAX_LENGTH } from './limits';
import { plantPageInput } from './plant-table';

const everyCodePoint = function* () {
  for (let codePoint = 0; codePoint <= 0x10_ffff; codePoint++) if (codePoint < 0xd800 || codePoint > 0xdfff) yield codePoint;
};

describe('the name fold', () => {
  it('finds what people see: case, accents, compatibility forms, invisible characters and spacing do not count', () => {
    const same: [string, string][] = [
      ['Café', 'cafe'],
      ['CAFE\u0301', 'cafe'],
      ['crème brûlée', 'creme brulee'],
      ['Straße', 'STRASSE'],
      ['ẞ', 'ss'],
      ['İstanbul', 'istanbul'],
      ['ΟΔΟΣ', 'οδος'],
      ['ﬁcus', 'ficus'],
      ['Ｆｕｌｌ', 'full'],
      ['ガ', 'カ'],
      ['fern\u200B hidden', 'fern hidden'],
      ['fern \u2060\u200B\u00A0 hidden', 'fern hidden'],
      ['fern\u200Bhidden', 'fernhidden'],
      ['soft\u00ADhyphen', 'softhyphen'],
      ['\u3164\u2800\u180E\uFEFFleaf\uFE0F', 'leaf'],
      ['  tab\there\u3000', 'tab here'],
    ];
    for (const [name, query] of same) expect(foldForSearch(name), JSON.stringify(name)).toBe(foldForSearch(query));
    expect(foldForSearch('Zeta Orchidée')).toBe('zeta orchidee');
    // Letters that are no letter and mark stay themselves, as do marks that are no diacritics and Hangul syllables.
    for (const kept of ['ø', 'ł', 'æ', '가', 'हिंदी']) expect(foldForSearch(kept)).toBe(kept);
  });

  it('leaves out every character the visibility rule calls invisible, but marks that are no diacritics and white space', { timeout: 60_000 }, () => {
    const invisible = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u2800\p{Noncharacter_Code_Point}]/u;
    for (const codePoint of everyCodePoint()) {
      const text = String.fromCodePoint(codePoint);
      if (invisible.test(text) && !/\p{White_Space}/u.test(text)) expect(foldForSearch(`a${text}b`), codePoint.toString(16)).toBe('ab');
      if (/\p{White_Space}/u.test(text)) expect(foldForSearch(`a${text}b`), codePoint.toString(16)).toBe('a b');
    }
  });

  it('is its own fold: a folded name folds to itself', { timeout: 60_000 }, () => {
    fc.assert(
      fc.property(foldName(), (name) => {
        const folded = foldForSearch(name);
        expect(foldForSearch(folded)).toBe(folded);
      }),
      { numRuns: 2_000 },
    );
    for (const codePoint of nameFoldTable().keys()) {
      const folded = foldForSearch(String.fromCodePoint(codePoint));
      expect(foldForSearch(folded), codePoint.toString(16)).toBe(folded);
    }
  });

  it('of the longest name, as a walk stop’s key, is taken back by the next page’s cursor', () => {
    // The code point whose fold is longest (in UTF-16 units, as zod counts a string), repeated to a name's limit:
    // what the server sends as the key of a walk stopped at that row (page.ts, walkKeyOf) must be accepted back.
    const [longest] = [...nameFoldTable()].sort(([, a], [, b]) => b.length - a.length)[0]!;
    const key = foldForSearch(String.fromCodePoint(longest).repeat(NAME_MAX_LENGTH));
    const next = plantPageInput.safeParse({ size: 25, q: 'x', sort: { key: 'name', dir: 'asc' }, cursor: { kind: 'after', id: 1n, key }, counts: false });
    expect(next.error?.issues, `a key of ${key.length} units`).toBeUndefined();
  });

  it('takes printable ASCII the short way exactly as the table has it', () => {
    const table = nameFoldTable();
    for (let codePoint = 0x20; codePoint <= 0x7e; codePoint++) {
      const character = String.fromCodePoint(codePoint);
      expect(table.get(codePoint) ?? character).toBe(character.toLowerCase());
    }
  });

  // The table, not Node's Unicode data, is the fold (the databases hold a copy); on a Node of another Unicode
  // version characters new to it may differ, and the table is rewritten only with a migration.
  it.runIf(process.versions.unicode === NAME_FOLD_UNICODE_VERSION)(`is the rule of src/tooling/name-fold-table.ts for every code point (Unicode ${NAME_FOLD_UNICODE_VERSION})`, { timeout: 60_000 }, () => {
    const table = nameFoldTable();
    for (const codePoint of everyCodePoint()) {
      const character = String.fromCodePoint(codePoint);
      const ruled = foldCodePoint(codePoint);
      if ((table.get(codePoint) ?? character) !== ruled) expect(table.get(codePoint) ?? character, codePoint.toString(16)).toBe(ruled);
    }
  });
});
