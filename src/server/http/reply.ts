import type { ServerResponse } from 'node:http';

import type { Problem } from '@/server/problems';
import { errorCatalog, type ErrorKind } from '@/shared/errors';

/** An answer before it goes on the wire: the doors build these; `writeReply` sends them. */
export type Reply = {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer | null;
  /** A body sent as it is made (a file), in place of `body`: its first chunk already read, so a failure before it was still a reply. */
  stream?: { first: IteratorResult<string>; rest: AsyncIterator<string> };
};

/**
 * A refusal raised by a guard or a door: what went wrong, and headers that belong to it (`Allow`,
 * `Retry-After`, `WWW-Authenticate`). Each door renders it in its own wire format.
 */
export class Refusal extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.message);
  }
}

export const refuse = (kind: ErrorKind, message: string, headers?: Record<string, string>) => new Refusal({ kind, message }, headers);

/** 404 for a path nothing serves; the path is shown cut short, as the client sent it. */
export const noSuchPath = (pathname: string) => refuse('routeNotFound', `no such path: ${pathname.length > 200 ? `${pathname.slice(0, 200)}…` : pathname}`);

export function jsonReply(status: number, body: string | null, headers?: Record<string, string>): Reply {
  return { status, headers: body === null ? { ...headers } : { 'Content-Type': 'application/json', ...headers }, body };
}

/**
 * The longest `message` an error body carries, in characters (code points). A message may quote what the
 * client sent (an unknown field's name), so it is cut here, once for every failure, as the document says.
 */
export const MESSAGE_MAX_LENGTH = 1000;

function bounded(message: string): string {
  if (message.length <= MESSAGE_MAX_LENGTH) return message;
  const characters = [...message];
  return characters.length <= MESSAGE_MAX_LENGTH ? message : `${characters.slice(0, MESSAGE_MAX_LENGTH - 1).join('')}…`;
}

/** The contract's error body, `{"error": <int32>, "message": <string>}`, with the status of its kind. */
export function problemReply({ kind, message }: Problem, headers: Record<string, string> = {}): Reply {
  const { status, value } = errorCatalog[kind];
  return jsonReply(status, JSON.stringify({ error: value, message: bounded(message) }), headers);
}

/**
 * Headers an answer starts with (the API headers), worked out once: a flat list of names and values, and the
 * lower-case name of each, by which a reply's own header of the same name replaces it.
 */
export type BaseHeaders = { readonly list: readonly string[]; readonly index: ReadonlyMap<string, number> };

export function baseHeaders(headers: Record<string, string>): BaseHeaders {
  const names = Object.keys(headers);
  if (names.length > 30) throw new Error('at most 30 base headers: which of them a reply replaces is kept in the bits of one number');
  return { list: Object.entries(headers).flat(), index: new Map(names.map((name, position) => [name.toLowerCase(), position])) };
}

const REQUEST_ID = 'X-Request-Id';
const NO_BASE = baseHeaders({});

/**
 * Sends a reply: the request id (`X-Request-Id`) and `base` (the API headers) first, unless the reply has its
 * own value for one, then the reply's headers and its Content-Length, in one `writeHead` with a flat array.
 * That is node:http's cheapest form: no header object kept per answer, no lower-casing and copying per
 * `setHeader` (the values are still checked as `setHeader` checks them). Headers a door set on the response
 * before (`setHeader`) stay unless the reply names them too, as before.
 */
export function writeReply(response: ServerResponse, reply: Reply, options: { head?: boolean; requestId?: string; base?: BaseHeaders } = {}): void {
  const own = reply.headers;
  const base = options.base ?? NO_BASE;
  // Header names are case-insensitive: the reply's `cache-control` replaces the base's `Cache-Control`.
  let replaced = 0;
  let ownsRequestId = false;
  for (const name in own) {
    const lower = name.toLowerCase();
    const position = base.index.get(lower);
    if (position !== undefined) replaced |= 1 << position;
    else if (lower === 'x-request-id') ownsRequestId = true;
  }
  const headers: string[] = [];
  if (options.requestId !== undefined && !ownsRequestId) headers.push(REQUEST_ID, options.requestId);
  const { list } = base;
  for (let index = 0; index < list.length; index += 2) if ((replaced & (1 << (index >> 1))) === 0) headers.push(list[index]!, list[index + 1]!);
  for (const name in own) headers.push(name, own[name]!);
  if (reply.body !== null) headers.push('Content-Length', String(Buffer.byteLength(reply.body)));
  response.writeHead(reply.status, headers);
  response.end(options.head ? undefined : (reply.body ?? undefined));
}
