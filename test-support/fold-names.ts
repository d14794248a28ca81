/**
 * Names to fold, for the tests that hold the app's fold and the databases' to each other (shared/name-fold.ts,
 * tooling/name-fold-sql.ts): mostly characters the fold changes (every code point of its table can come up),
 * among spaces of every kind, invisible characters, plain ASCII and any other code point. No U+0000, which
 * neither engine stores in text; no surrogate, which is no character.
 */
import fc from 'fast-check';

import { nameFoldTable } from '@/shared/name-fold';

const folded = [...nameFoldTable().keys()].filter((codePoint) => codePoint !== 0);
const character = (codePoint: number) => String.fromCodePoint(codePoint);

/**
 * Characters a name search meets: accents composed and combining, spaces, invisible ones, case pairs that are not
 * one to one; and U+FFFE and U+FFFF beside U+FFFD, which SQLite's unicode() and FTS5 read as U+FFFD.
 */
const NOTABLE = ['é', 'e\u0301', 'É', 'ß', 'ẞ', 'İ', 'ς', 'Σ', 'ﬁ', 'Ａ', '가', 'ガ', ' ', '  ', '\u00a0', '\u3000', '\t', '\u200b', '\u2060', '\u3164', '\u2800', '\u180e', '\u00ad', '\ufeff', '\ufe0f', '\ufffd', '\ufffe', '\uffff'];

export const foldNameCharacter: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NOTABLE) },
  { weight: 3, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map(character) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: folded.length - 1 }).map((index) => character(folded[index]!)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 0x10_ffff - 0x800 }).map((point) => character(point >= 0xd800 ? point + 0x800 : point)) },
);

/** A name of up to `maxLength` generated characters (some are two code points: "e" + U+0301). */
export const foldName = (maxLength = 40): fc.Arbitrary<string> => fc.array(foldNameCharacter, { maxLength }).map((characters) => characters.join(''));
