/**
 * The wire contract both floors speak (bench/floor.ts, bench/stack-floor.ts), written once: the bearer-token
 * check, the routes and their 404/405s, the body's reading and limits, exact-int64 JSON both ways, the list's
 * Link and ETag, and the `{"error", "message"}` bodies with the catalogue's values. Each floor is its own
 * server and runs each operation its own way (prepared statements; a tRPC procedure over Prisma); what a
 * client sees is the same bytes as the app's, for as little work as the contract allows. The bench's
 * contract check (bench/README.md) compares both floors' answers with the app's at every start.
 *
 * The floors are bundled alone and kept bare, so this file imports only what is browser-safe and free of
 * dependencies from src/ (the error catalogue, the limits, the messages' pieces), not src/shared/plants.ts, whose
 * zod schemas would be built at the floor's start: the plant's fields reach the floors as plain data, which
 * lib/build.ts reads from the declaration and writes into their bundle (PLANT_FIELDS); the id's bounds below repeat
 * that file's, and the contract check holds them to the app's answers.
 */

import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import Database from 'better-sqlite3';

import { errorCatalog, type ErrorKind } from '../src/shared/errors';
import { BODY_LIMIT_BYTES } from '../src/shared/limits';
import { listed, unknownFields } from '../src/shared/messages';
import { withoutTrailingSlashes } from '../src/shared/text';
import type { PlantFieldFacts } from '../test-support/plant-fields';
import { API_HEADERS, API_LIST_HEADERS } from './api-headers';

/** The declared plant fields (src/shared/plants.ts, `plantFields`), in order: written into the bundle by lib/build.ts. */
declare const PLANT_FIELDS: readonly PlantFieldFacts[];
export const FIELDS: readonly PlantFieldFacts[] = PLANT_FIELDS;
/** The fields' columns, for the floors' SQL: `"name", "tag"`. */
export const FIELD_COLUMNS = FIELDS.map(({ name }) => `"${name}"`).join(', ');

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const PAGE_LIMIT_DEFAULT = 100;
export const PAGE_LIMIT_MAX = 1000;
const LAST_USED_PRECISION_MS = 60_000;
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;
const BEARER = /^bearer(?: (.*))?$/i;
export const CONTROL = /\p{Cc}/u;
export const NOT_SPACE = /\S/u;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Where the floors listen and what they read, from the same variables as the app. */
export const floorEnv = (() => {
  const databaseUrl = process.env.DATABASE_URL ?? '';
  if (!databaseUrl.startsWith('file:')) throw new Error(`DATABASE_URL must be a file: URL, got "${databaseUrl}"`);
  return {
    databaseUrl,
    databaseFile: databaseUrl.slice('file:'.length),
    port: Number(process.env.PORT ?? 4000),
    hostname: process.env.HOSTNAME_TO_BIND ?? '127.0.0.1',
    publicUrl: withoutTrailingSlashes(process.env.PUBLIC_URL ?? ''),
    /** The app's durability: every commit synced (synchronous=FULL) unless SQLITE_SYNCHRONOUS=normal. */
    synchronous: process.env.SQLITE_SYNCHRONOUS?.toLowerCase() === 'normal' ? 'NORMAL' : 'FULL',
  };
})();

/** A failure as a client reads it: the catalogue's status and value for `kind`, and the floor's words. */
export class Refusal extends Error {
  readonly status: number;
  readonly value: number;
  constructor(
    kind: ErrorKind,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = errorCatalog[kind].status;
    this.value = errorCatalog[kind].value;
  }
}

/** The floors' words for the refusals both make, so the two say the same thing. */
export const say = {
  required: (field: string) => `${field} is required`,
  notString: (field: string) => `${field} must be a string`,
  notInteger: (field: string) => `${field} must be an integer`,
  notInt64: (field: string) => `${field} must be an int64`,
  empty: (field: string) => `${field} must not be empty`,
  tooLong: (field: string, maxLength: number) => `${field} must be at most ${maxLength} characters`,
  control: (field: string) => `${field} must not contain control characters`,
  onlySpace: (field: string) => `${field} must not be only white space`,
  limit: () => `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}`,
  unknownField: (key: string) => `${unknownFields([key])}: a new plant has only ${listed(['id', ...FIELDS.map(({ name }) => name)])}`,
  taken: (id: bigint) => `a plant with id ${id} already exists`,
  noPlant: (id: bigint | string) => `no plant with id ${id}`,
};

export type Actor = { userId: number; admin: boolean };

/**
 * The app's bearer-token check on its own better-sqlite3 connection: the token's SHA-256 looked up in
 * ApiToken joined to User on every request, revoked and expired tokens refused, "last used" written at
 * most once a minute. On `db`: the floor's own connection, or one of its own beside the stack floor's Prisma.
 */
export function openTokenCheck(db: Database.Database): (request: IncomingMessage) => Actor {
  const tokenByHash = db.prepare<[string], { tokenId: number; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; userId: number; role: string }>(
    `SELECT t.id AS tokenId, t.lastUsedAt, t.expiresAt, t.revokedAt, u.id AS userId, u.role AS role
       FROM "ApiToken" t JOIN "User" u ON u.id = t.userId WHERE t.hash = ?`,
  );
  const touchToken = db.prepare<[string, number]>(`UPDATE "ApiToken" SET lastUsedAt = ? WHERE id = ?`);
  const invalid = () =>
    new Refusal('invalidToken', 'the bearer token is not valid: it is unknown, revoked or expired', { 'WWW-Authenticate': 'Bearer realm="plants", error="invalid_token"' });
  return (request) => {
      const header = request.headers.authorization;
      const match = header ? BEARER.exec(header.trim()) : null;
      if (!match) throw new Refusal('missingToken', 'a bearer token is required: send the header "Authorization: Bearer <token>"', { 'WWW-Authenticate': 'Bearer realm="plants"' });
      const token = match[1]?.trim() ?? '';
      if (!TOKEN_PATTERN.test(token)) throw invalid();
      const row = tokenByHash.get(createHash('sha256').update(token).digest('hex'));
      const now = Date.now();
      if (!row || row.revokedAt !== null || (row.expiresAt !== null && Date.parse(row.expiresAt) <= now)) throw invalid();
      if (row.lastUsedAt === null || now - Date.parse(row.lastUsedAt) > LAST_USED_PRECISION_MS) touchToken.run(prismaTimestamp(new Date(now)), row.tokenId);
      return { userId: row.userId, admin: row.role === 'admin' };
  };
}

/** A better-sqlite3 connection as the app's: on the same file, a 10 s busy timeout, the app's durability. */
export function openDatabase(): Database.Database {
  const db = new Database(floorEnv.databaseFile, { timeout: 10_000 });
  db.pragma(`synchronous = ${floorEnv.synchronous}`);
  return db;
}

/** One answer: the headers as a flat [name, value, …] list (node:http's cheapest form) with a Content-Length. */
export function send(response: ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}): void {
  const all = ['X-Request-Id', randomUUID(), ...API_HEADERS];
  if (body !== null) all.push('Content-Type', 'application/json');
  for (const name in headers) all.push(name, headers[name]!);
  if (body !== null) all.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(status, all);
  response.end(body ?? undefined);
}

/** The list's answer: exactly 200 with its ETag and maybe a Link, without an extra object per answer. */
export function sendList(response: ServerResponse, body: string, link: string | null, etag: string): void {
  const all = ['X-Request-Id', randomUUID(), ...API_LIST_HEADERS, 'Content-Type', 'application/json', 'ETag', etag];
  if (link !== null) all.push('Link', link);
  all.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(200, all);
  response.end(body);
}

/** The list's query as sent: `limit` and `after` as text, each at most once. */
export type ListQuery = { limit?: string; after?: string };

/** `limit=N` or `limit=N&after=ID` with plain digits: what paging clients send; anything else takes URLSearchParams. */
const COMMON_QUERY = /^limit=(\d{1,4})(?:&after=(-?\d{1,20}))?$/;

export function listQuery(query: string): ListQuery {
  const common = COMMON_QUERY.exec(query);
  if (common) return common[2] === undefined ? { limit: common[1] } : { limit: common[1], after: common[2] };
  const parameters = new URLSearchParams(query);
  const limits = parameters.getAll('limit');
  const afters = parameters.getAll('after');
  if (limits.length > 1 || afters.length > 1) throw new Refusal('invalidQueryParameter', 'limit and after may be given once each');
  return { ...(limits[0] === undefined ? {} : { limit: limits[0] }), ...(afters[0] === undefined ? {} : { after: afters[0] }) };
}

/** The next page's Link, as the app writes it: relative (it never echoes a Host), or under PUBLIC_URL when that is set. */
export const nextLink = (limit: number, lastId: bigint) => `<${floorEnv.publicUrl}/api/plants?limit=${limit}&after=${lastId}>; rel="next"`;

/** The caller's list version as listEtag takes it, from the version row's text (none yet: 0). */
export const listVersion = (actor: Actor, version: string | undefined) => (actor.admin ? `all:${version}` : `owner ${actor.userId}:${version ?? '0'}`);

/** The list's body: the plants' JSON, as many as `count`. */
export function plantsJson(rows: readonly PlantRow[], count = rows.length): string {
  let body = '[';
  for (let i = 0; i < count; i++) body += (i === 0 ? '' : ',') + plantJson(rows[i]!);
  return `${body}]`;
}

/** A request body as text: application/json in UTF-8, at most BODY_LIMIT_BYTES (a larger one is cut off with 413). */
export async function readBody(request: IncomingMessage): Promise<string> {
  const type = (request.headers['content-type'] ?? '').split(';');
  const charset = type.slice(1).map((part) => part.trim().toLowerCase()).find((part) => part.startsWith('charset='));
  if (type[0]!.trim().toLowerCase() !== 'application/json' || (charset && !['charset=utf-8', 'charset=utf8', 'charset="utf-8"'].includes(charset))) {
    throw new Refusal('unsupportedMediaType', 'the body must be sent with Content-Type: application/json');
  }
  const tooLarge = (headers?: Record<string, string>) => new Refusal('bodyTooLarge', `the body must be at most ${BODY_LIMIT_BYTES} bytes`, headers);
  if (Number(request.headers['content-length'] ?? 0) > BODY_LIMIT_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        request.removeAllListeners('data');
        request.pause();
        reject(tooLarge({ connection: 'close' }));
      } else chunks.push(chunk);
    });
    request.once('end', resolve);
    request.once('error', reject);
  });
  try {
    return utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  } catch {
    throw new Refusal('invalidJson', 'the body is not valid UTF-8');
  }
}

/**
 * The body as a JSON object, its integers exact: as MARK + digits (the floor reads them so), or as bigints
 * with `bigints` (the stack floor's zod schemas take them so).
 */
export function parseJsonObject(text: string, bigints = false): Record<string, unknown> {
  let body: unknown;
  try {
    body = bigints
      ? JSON.parse(quoteIntegers(text), (_key, value: unknown) => (typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(1)) : value))
      : JSON.parse(quoteIntegers(text));
  } catch (error) {
    throw new Refusal('invalidJson', `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal('bodyNotObject', 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** What a floor does for each operation; the wire (routes, token, body, failures) is serveFloor's. */
export type FloorOperations = {
  list(response: ServerResponse, actor: Actor, query: ListQuery): void | Promise<void>;
  /** `body` is the request body as text, read and limited; the floor parses it (parseJsonObject). */
  create(response: ServerResponse, actor: Actor, body: string): void | Promise<void>;
  /** `id` is the path's last segment, percent-decoded, not yet checked. */
  remove(response: ServerResponse, actor: Actor, id: string): void | Promise<void>;
  health(): unknown;
  close(): void | Promise<void>;
};

const PLANT_PATH = '/api/plants/';

/** The routes, as the app answers them: the three operations, health, and the app's 404 and 405s. */
async function route(request: IncomingMessage, response: ServerResponse, authenticate: (request: IncomingMessage) => Actor, operations: FloorOperations): Promise<void> {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const method = request.method ?? 'GET';
  if (path === '/api/plants') {
    if (method !== 'GET' && method !== 'POST') throw new Refusal('methodNotAllowed', `${method} is not allowed on ${path}`, { allow: 'GET, POST, HEAD, OPTIONS' });
    const actor = authenticate(request);
    if (method === 'GET') return operations.list(response, actor, listQuery(queryAt === -1 ? '' : url.slice(queryAt + 1)));
    return operations.create(response, actor, await readBody(request));
  }
  if (path.startsWith(PLANT_PATH) && path.indexOf('/', PLANT_PATH.length) === -1) {
    if (method !== 'DELETE') throw new Refusal('methodNotAllowed', `${method} is not allowed on ${path}`, { allow: 'DELETE, OPTIONS' });
    let id: string;
    try {
      id = decodeURIComponent(path.slice(PLANT_PATH.length));
    } catch {
      throw new Refusal('routeNotFound', 'no such path');
    }
    return operations.remove(response, authenticate(request), id);
  }
  if (path === '/api/health' && method === 'GET') {
    await operations.health();
    return send(response, 200, '{"status":"ok","database":"ok"}');
  }
  throw new Refusal('routeNotFound', `no such path: ${path}`);
}

/**
 * Serves a floor on PORT until SIGTERM or SIGINT, every failure answered in the contract's shape; tokens are
 * checked on `tokenDatabase` (operations.close closes it).
 */
export function serveFloor(name: string, operations: FloorOperations, tokenDatabase: Database.Database): void {
  const authenticate = openTokenCheck(tokenDatabase);
  const server = createServer((request, response) => {
    route(request, response, authenticate, operations).catch((error: unknown) => {
      if (response.headersSent) return response.destroy();
      if (error instanceof Refusal) return send(response, error.status, JSON.stringify({ error: error.value, message: error.message }), error.headers);
      console.error(error);
      send(response, 500, JSON.stringify({ error: errorCatalog.internal.value, message: 'the server failed to handle this request' }));
    });
  });
  server.listen(floorEnv.port, floorEnv.hostname, () => console.log(`${name} is serving on http://${floorEnv.hostname}:${floorEnv.port}`));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      server.close(() => {
        void Promise.resolve(operations.close()).finally(() => process.exit(0));
      });
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 5_000).unref();
    });
  }
}

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

/** A plant as the floors read it: the id, and each declared field's text (NULL, or left out, when it has none). */
export type PlantRow = { id: bigint; [field: string]: string | bigint | null | undefined };

const MEMBER_KEYS = FIELDS.map(({ name }) => [name, `,${JSON.stringify(name)}:`] as const);

/** A plant's JSON as the app answers it: id, then each field in its order, one it has none of left out. */
export function plantJson(row: PlantRow): string {
  let json = `{"id":${row.id}`;
  for (const [name, key] of MEMBER_KEYS) {
    const value = row[name];
    if (value !== null && value !== undefined) json += key + JSON.stringify(value);
  }
  return `${json}}`;
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
