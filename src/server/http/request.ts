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
  url: URL;
  /** The client's address: the socket's, or behind a trusted proxy the right-most untrusted X-Forwarded-For hop. */
  clientAddress: string;
  /** What the log line reports beside method, path and status. */
  trace: { door?: string; userId?: number; calls?: number; rpc?: string; traceId?: string };
};

export const PLACEHOLDER_ORIGIN = 'http://plant-store.invalid';

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

export type Target = { kind: 'path'; url: URL } | { kind: 'asterisk' };

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
export function parameterNotUtf8(url: URL, names: readonly string[]): string | undefined {
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
