// A module of its own, with no imports: the bench's floors write the folded name as the app does without
// taking in the schemas (bench/floor.ts stays node:http and better-sqlite3).
/**
 * The text a name search compares, on both engines alike: compatibility forms unified (NFKC: "ﬁ" is "fi",
 * full-width "Ａ" is "A"), then full case folding (upper then lower: "ß" and "SS" both become "ss"), with
 * the final sigma made an ordinary one and "ß" (from "ẞ") written "ss". The service stores it beside each name (`nameFolded`), and folds
 * the query the same way, so "contains, case-insensitively" means the same in SQLite (whose LIKE folds
 * ASCII only) and PostgreSQL, for every script.
 */
export function foldForSearch(value: string): string {
  return value.normalize('NFKC').toUpperCase().toLowerCase().replace(/ς/g, 'σ').replace(/ß/g, 'ss');
}
