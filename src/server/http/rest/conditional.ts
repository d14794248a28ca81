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
 * Whether `If-None-Match` names `etag` (weak comparison, as the RFC asks for this header: `W/"x"` matches
 * `"x"`). `*` ("any current answer") is not honoured: a 304 answers only the ETag this request's own 200
 * carries, so a request the procedure would refuse (a member's `owner` filter) gets its 400, not a 304.
 */
export function noneMatch(request: IncomingMessage, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (header === undefined) return false;
  for (const candidate of header.split(',')) {
    const trimmed = candidate.trim();
    if ((trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag) return true;
  }
  return false;
}
