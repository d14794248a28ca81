import type { IncomingMessage } from 'node:http';

import { refuse } from './reply';

/**
 * What the front and the doors know of a request once its target and headers passed the front's checks.
 * `url` holds the path and query as the client sent them (absolute-form targets reduced to those); its
 * origin is a fixed placeholder, never the Host header, so nothing can be built from a header a client chose.
 */
export type FrontRequest = {
  id: string;
  raw: IncomingMessage;
  method: string;
  url: RequestUrl;
  /** The client's address: the socket's, or behind a trusted proxy the right-most untrusted X-Forwarded-For hop. */
  clientAddress: string;
  /**
   * What the log line reports beside method, path and status. `units`: what the request was charged against its
   * token's rate-limit bucket, every charge of every door and procedure (docs/api.md, "Rate limits").
   */
  trace: { door?: string; userId?: number; calls?: number; rpc?: string; traceId?: string; units?: number };
};

/** Notes `units` more charged to the request's token (its log line's `units`). */
export function noteCharged(request: FrontRequest, units: number): void {
  if (units > 0) request.trace.units = (request.trace.units ?? 0) + units;
}

/** A door's way to take more units from the request's bucket (`take`), noting what it took once it did. */
export function notingCharges<Refused>(request: FrontRequest, take: (units: number) => Refused | undefined | Promise<Refused | undefined>) {
  return (units: number): Refused | undefined | Promise<Refused | undefined> => {
    const taken = (refused: Refused | undefined) => {
      if (refused === undefined) noteCharged(request, units);
      return refused;
    };
    const refused = take(units);
    return refused instanceof Promise ? refused.then(taken) : taken(refused);
  };
}

export const PLACEHOLDER_ORIGIN = 'http://plant-store.invalid';

/** What the front and the doors read of a target: the URL parser's pathname, search and query parameters. */
export type RequestUrl = Pick<URL, 'pathname' | 'search' | 'searchParams'>;

/** A target the URL parser would keep as it is (`plainTarget`): its parts, the query parameters read when asked. */
class PlainTarget implements RequestUrl {
  #searchParams: URLSearchParams | undefined;
  constructor(
    readonly pathname: string,
    readonly search: string,
  ) {}
  // As URL does: URLSearchParams of the search, made on first use.
  get searchParams(): URLSearchParams {
    return (this.#searchParams ??= new URLSearchParams(this.search));
  }
}

/** Characters that may appear in a path segment / in a query for the fast path; everything else goes to `new URL`. */
function charTable(characters: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const character of characters) table[character.charCodeAt(0)] = 1;
  return table;
}
const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// RFC 3986's unreserved characters, its sub-delimiters, ':' and '@': none is in the WHATWG path percent-encode
// set, none is '%' (no percent-decoding of dots) or '\' (a slash to the parser).
const PATH_CHARACTERS = charTable(`${ALPHANUMERIC}-._~!$&'()*+,;=:@`);
// The same without "'" (the special-query percent-encode set has it) and with '/', '?' and '%', which the
// parser leaves alone in a query (it checks no percent-encoding there).
const QUERY_CHARACTERS = charTable(`${ALPHANUMERIC}-._~!$&()*+,;=:@/?%`);
const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;
const DOT = 0x2e;

/**
 * The request target's parts without the URL parser, for the targets it would keep as they are, else undefined
 * (the caller parses). An origin-form target (starts with '/') is kept as it is by the WHATWG parser when:
 * - its path has only PATH_CHARACTERS: nothing percent-encoded, no '\' (a '/' to the parser), no '%' (so no
 *   `%2e` dot), no control, space or non-ASCII character (stripped, or encoded);
 * - no path segment is '.' or '..' (which the parser removes), and no segment but the last is empty (`//`:
 *   kept by the parser, but left to it here);
 * - its query, after the first '?', has only QUERY_CHARACTERS: no '#' (a fragment), no "'" (encoded).
 * Then the pathname is the path, the search is '?' and the query, or '' when the query is empty, as the
 * parser's. `request.test.ts` compares the two on a large set of generated targets. One pass, no regex.
 */
export function plainTarget(target: string): RequestUrl | undefined {
  const length = target.length;
  if (length === 0 || target.charCodeAt(0) !== SLASH) return undefined;
  let segmentStart = 1;
  let index = 1;
  for (; index <= length; index++) {
    const code = index === length ? QUESTION_MARK : target.charCodeAt(index);
    if (code === SLASH || code === QUESTION_MARK) {
      const segmentLength = index - segmentStart;
      if (code === SLASH && segmentLength === 0) return undefined;
      if (segmentLength === 1 && target.charCodeAt(segmentStart) === DOT) return undefined;
      if (segmentLength === 2 && target.charCodeAt(segmentStart) === DOT && target.charCodeAt(segmentStart + 1) === DOT) return undefined;
      if (code === QUESTION_MARK) break;
      segmentStart = index + 1;
    } else if (code >= 128 || PATH_CHARACTERS[code] === 0) {
      return undefined;
    }
  }
  if (index >= length - 1) return new PlainTarget(index >= length ? target : target.slice(0, index), '');
  for (let query = index + 1; query < length; query++) {
    const code = target.charCodeAt(query);
    if (code >= 128 || QUERY_CHARACTERS[code] === 0) return undefined;
  }
  return new PlainTarget(target.slice(0, index), target.slice(index));
}

/** A host name, IPv4 or [IPv6] literal, with an optional port: anything else in Host is refused. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function isHost(host: string): boolean {
  if (!HOST.test(host)) return false;
  const port = /:(\d+)$/.exec(host.startsWith('[') ? host.slice(host.indexOf(']')) : host)?.[1];
  return port === undefined || Number(port) <= 65535;
}

/**
 * Headers a request may carry once: a second copy makes it ambiguous which one a proxy or this server reads.
 * (Two Authorization fields are no credential at all: the auth guard answers them 401, as a bad token.)
 */
const SINGLE_HEADERS = new Set(['host', 'content-type', 'content-length']);

export function repeatedHeader(rawHeaders: readonly string[], names: ReadonlySet<string> = SINGLE_HEADERS): string | undefined {
  const seen = new Set<string>();
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]!.toLowerCase();
    if (!names.has(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

export type Target = { kind: 'path'; url: RequestUrl } | { kind: 'asterisk' };

/**
 * The request target in each form RFC 9112 (3.2) lets a server receive: origin-form (`/api/plants`),
 * absolute-form (`http://host/api/plants`, whose authority replaces Host), and asterisk-form (`OPTIONS *`).
 * Also the Host header: exactly one, and a host name. Throws a 400 refusal for anything else.
 */
export function readTarget(request: IncomingMessage): Target {
  const target = request.url ?? '';
  const repeated = repeatedHeader(request.rawHeaders);
  if (repeated) throw refuse('malformedRequest', `the request has more than one ${repeated} header`);
  const host = request.headers.host;
  if (host === undefined) {
    if (request.httpVersionMinor >= 1) throw refuse('malformedRequest', 'the request has no Host header');
  } else if (!isHost(host)) {
    throw refuse('malformedRequest', 'the Host header is not a host name');
  }
  if (target === '*') {
    if (request.method !== 'OPTIONS') throw refuse('malformedRequest', 'only OPTIONS may have the target *');
    return { kind: 'asterisk' };
  }
  if (target.startsWith('/')) {
    const plain = plainTarget(target);
    if (plain) return { kind: 'path', url: plain };
    try {
      return { kind: 'path', url: new URL(PLACEHOLDER_ORIGIN + target) };
    } catch {
      throw refuse('malformedRequest', 'the request target is not a valid path');
    }
  }
  if (/^https?:\/\//i.test(target)) {
    let absolute: URL;
    try {
      absolute = new URL(target);
    } catch {
      throw refuse('malformedRequest', 'the request target is not a valid URL');
    }
    if (absolute.username || absolute.password) throw refuse('malformedRequest', 'the request target must not carry credentials');
    if (!isHost(absolute.host)) throw refuse('malformedRequest', 'the request target does not name a host');
    return { kind: 'path', url: new URL(PLACEHOLDER_ORIGIN + absolute.pathname + absolute.search) };
  }
  throw refuse('malformedRequest', 'the request target must be a path, an absolute http(s) URL, or * for OPTIONS');
}

const isHexDigit = (code: number) => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Whether percent-decoding `text` (as URLSearchParams does: `%` and two hex digits is a byte) gives UTF-8. */
function decodesToUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  const bytes = new Uint8Array(text.length);
  let length = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x25 && isHexDigit(text.charCodeAt(index + 1)) && isHexDigit(text.charCodeAt(index + 2))) {
      bytes[length++] = Number.parseInt(text.slice(index + 1, index + 3), 16);
      index += 2;
    } else {
      // A URL's query is ASCII: its parser percent-encodes everything else.
      bytes[length++] = code;
    }
  }
  try {
    strictUtf8.decode(bytes.subarray(0, length));
    return true;
  } catch {
    return false;
  }
}

/**
 * The first of `names` whose value in the query is not UTF-8 once percent-decoded (`q=%FF`, an encoded
 * surrogate `%ED%A0%80`), or undefined. URLSearchParams turns such bytes into U+FFFD without a word, so a
 * search would silently look for another text; each door refuses them with a 400 naming the parameter.
 */
export function parameterNotUtf8(url: RequestUrl, names: readonly string[]): string | undefined {
  // Without a percent sign every value is the URL parser's own text, which is ASCII.
  if (!url.search.includes('%')) return undefined;
  for (const pair of url.search.slice(1).split('&')) {
    const separator = pair.indexOf('=');
    if (separator < 0) continue;
    const name = new URLSearchParams(pair.slice(0, separator)).keys().next().value ?? '';
    if (names.includes(name) && !decodesToUtf8(pair.slice(separator + 1))) return name;
  }
  return undefined;
}

export const notUtf8Refusal = (name: string) => refuse('invalidQueryParameter', `${name} is not valid UTF-8 once percent-decoded`);
