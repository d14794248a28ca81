/**
 * The exact-int64 JSON both floors write and read by hand (bench/floor.ts, bench/stack-floor.ts): the same
 * bytes as the app's answers, for as little work as the contract allows.
 */

import { createHash } from 'node:crypto';

/** Integer tokens of a request body are rewritten as strings behind this marker before JSON.parse (see quoteIntegers). */
export const MARK = '\u0000';

/** Digits, `.`, `e`, `E`, `+`, `-`: the characters a JSON number token is made of. */
const isNumberChar = (code: number) => (code >= 48 && code <= 57) || code === 46 || code === 101 || code === 69 || code === 43 || code === 45;

/**
 * Rewrites each integer token outside strings as the string MARK + digits, so JSON.parse keeps every digit
 * and a field can still tell an integer (MARK…) from a string. Anything else is left for JSON.parse to judge.
 */
export function quoteIntegers(text: string): string {
  let out = '';
  let copiedUpTo = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 34) {
      // A string: skip to its closing quote.
      index++;
      while (index < text.length) {
        const inner = text.charCodeAt(index);
        if (inner === 92) index += 2;
        else if (inner === 34) {
          index++;
          break;
        } else index++;
      }
      continue;
    }
    if (code === 45 || (code >= 48 && code <= 57)) {
      let end = index + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const token = text.slice(index, end);
      if (/^-?(?:0|[1-9]\d*)$/.test(token)) {
        out += `${text.slice(copiedUpTo, index)}"\\u0000${token}"`;
        copiedUpTo = end;
      }
      index = end;
      continue;
    }
    index++;
  }
  return copiedUpTo === 0 ? text : out + text.slice(copiedUpTo);
}

export type PlantRow = { id: bigint; name: string; tag: string | null };

export function plantJson(row: { id: bigint; name: string; tag?: string | null }): string {
  return `{"id":${row.id},"name":${JSON.stringify(row.name)}${row.tag === null || row.tag === undefined ? '' : `,"tag":${JSON.stringify(row.tag)}`}}`;
}

/** Prisma's better-sqlite3 adapter writes DateTime as ISO 8601 with `+00:00`; so do the floors. */
export const prismaTimestamp = (date: Date) => date.toISOString().replace('Z', '+00:00');

/**
 * The list's ETag as the app makes it (src/server/http/rest/conditional.ts): SHA-256 of the representation's
 * number, the operation, the caller's version (`owner N:V` for a member, `all:S` for an admin, read from
 * PlantListVersion) and the query as its input (`limit`, then `after`, as sent), base64url, 27 characters.
 */
export function listEtag(version: string, query: { limit?: string; after?: string }): string {
  let input = '{';
  if (query.limit !== undefined) input += `"limit":${JSON.stringify(query.limit)}`;
  if (query.after !== undefined) input += `${input === '{' ? '' : ','}"after":${JSON.stringify(query.after)}`;
  const hash = createHash('sha256').update(`1\nGET /plants\n${version}\n${input === '{' ? '{}' : `${input}}`}`);
  return `"${hash.digest('base64url').slice(0, 27)}"`;
}

/** The caller's list version, as src/server/plants/versions.ts reads it. */
export const OWN_LIST_VERSION_SQL = `SELECT CAST("version" AS TEXT) AS version FROM "PlantListVersion" WHERE "ownerId" = ?`;
export const ALL_LIST_VERSION_SQL = `SELECT CAST(COALESCE(SUM("version"), 0) AS TEXT) AS version FROM "PlantListVersion"`;
