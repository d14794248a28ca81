// A module of its own, importing only its table: the bench's floors write the folded name as the app does
// without taking in the schemas (bench/floor.ts stays node:http and better-sqlite3).
import { NAME_FOLD_RUNS } from './name-fold-table';

/**
 * What each code point the fold changes becomes ('' for one left out), from the generated table
 * (name-fold-table.ts; the rule: src/tooling/name-fold-table.ts). Read once, when first needed: the page's
 * bundle, which never folds, carries no map.
 */
let foldTable: Map<number, string> | undefined;
export function nameFoldTable(): ReadonlyMap<number, string> {
  if (foldTable) return foldTable;
  const table = new Map<number, string>();
  for (const line of NAME_FOLD_RUNS.split('\n')) {
    if (line === '') continue;
    const [first, count, step, value] = line.split(' ') as [string, string, string, string];
    for (let index = 0, codePoint = parseInt(first, 16); index < Number(count); index++, codePoint += parseInt(step, 16)) {
      const shift = value[0] === '+' ? 1 : value[0] === '-' && value !== '-' ? -1 : 0;
      const folded =
        value === '-'
          ? ''
          : shift !== 0
            ? String.fromCodePoint(codePoint + shift * parseInt(value.slice(1), 16))
            : String.fromCodePoint(...value.split('.').map((point) => parseInt(point, 16)));
      table.set(codePoint, folded);
    }
  }
  foldTable = table;
  return table;
}

/** Printable ASCII only: each character is itself or, A to Z, its lower case (the table holds nothing else for them). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** Spaces the fold leaves: one between words, none at either end (most names have no other, and are returned as they are). */
const collapsedSpaces = (text: string) =>
  text.includes('  ') || text.startsWith(' ') || text.endsWith(' ') ? text.replace(/ {2,}/g, ' ').replace(/^ | $/g, '') : text;

/**
 * The text a name search compares and the name sort orders by, on both engines alike (docs/api.md, "Name
 * search"): each code point as the table says (compatibility forms unified, case folded, accents and every
 * invisible character left out, white space as a space), then each run of spaces as one, none at either end.
 * "Café" and "CAFE\u0301" are "cafe", "Straße" is "strasse", "fern\u200B \u00A0hidden " is "fern hidden".
 * The database folds every stored name by the same table, whoever writes it (migration
 * *_plant_name_fold_in_the_database; src/tooling/name-fold-sql.ts), and the query is folded here.
 */
export function foldForSearch(value: string): string {
  if (PRINTABLE_ASCII.test(value)) return collapsedSpaces(value.toLowerCase());
  const table = nameFoldTable();
  let folded = '';
  for (const character of value) folded += table.get(character.codePointAt(0)!) ?? character;
  return collapsedSpaces(folded);
}
