import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import { stringifyExactJson } from './exact-json';
import type { RestRoute } from './routing';

/**
 * Conditional GETs (RFC 9110, 13.1.2) for an operation whose procedure declares `conditional`: a strong ETag
 * per answer, and `If-None-Match` answered 304 without calling the procedure.
 *
 * The ETag is a hash of what decides the answer's bytes: the operation, the caller's version of the data
 * (which names the scope: one owner, or everything), and the input as the procedure would get it. It is
 * computed, never stored, so every process and instance gives the same answer the same ETag. Bump
 * REPRESENTATION when the answer's JSON changes for the same data, so no client keeps an ETag of the old form.
 */
const REPRESENTATION = '1';

export function entityTag(route: RestRoute, version: string, input: unknown): string {
  const digest = hash('sha256', `${REPRESENTATION}\n${route.method} ${route.template}\n${version}\n${stringifyExactJson(input ?? null)}`, 'base64url');
  return `"${digest.slice(0, 27)}"`;
}

/**
 * One member of `If-None-Match` and its comma, from `lastIndex` (where no whitespace is): `*`, or an entity
 * tag (weak or not), or nothing (a list may have empty members: `"a", , "b"`).
 */
const LIST_MEMBER = /(?:(?:(\*)|(W\/)?("[\x21\x23-\x7E\x80-\xFF]*"))[\t ]*)?(?:,[\t ]*|$)/y;

/**
 * Whether `If-None-Match` holds a current answer whose ETag is `etag` (RFC 9110, 13.1.2): `*` matches any
 * current representation, and an entity tag matches by weak comparison, as the RFC asks for this header
 * (`W/"x"` matches `"x"`). The caller asks only about an answer that exists: a 200 this process gave for that
 * ETag, or the procedure's own 200 just now; a request the procedure refuses (a member's `owner` filter) gets
 * its 400 whatever the header says. `*` among entity tags (not the grammar's, which has it alone) matches too,
 * as in Go's net/http; the list is read up to its first member that is neither, as there.
 */
export function noneMatch(request: IncomingMessage, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  LIST_MEMBER.lastIndex = header.length - header.trimStart().length;
  while (LIST_MEMBER.lastIndex < header.length) {
    const member = LIST_MEMBER.exec(header);
    if (member === null) return false;
    if (member[1] !== undefined || member[3] === etag) return true;
  }
  return false;
}
