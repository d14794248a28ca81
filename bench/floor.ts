/**
 * The benchmark's floor: the same three REST operations and the same bearer-token lookup as Plant Store,
 * with nothing in between: node:http, better-sqlite3 prepared statements, hand-written JSON. It is not
 * part of the app; it tells the benchmark what this machine, this database file and this wire contract
 * cost at the least, so the app's figures can be read as a ratio. The bench runs it bundled, on plain node
 * (lib/build.ts writes .bench-build/bench/floor.mjs):
 *
 *   DATABASE_URL=file:/tmp/x.db PORT=4000 node .bench-build/bench/floor.mjs
 *
 * The wire contract is the app's for the happy paths: `Authorization: Bearer pst_…` looked up by its
 * SHA-256 in ApiToken joined to User on every request (revoked and expired tokens refused, "last used"
 * written at most once a minute); a member sees their own plants, an admin every plant; `GET
 * /api/plants?limit&after` by id ascending with `Link: </api/plants?…>; rel="next"` (relative, as the app) when more follow; `POST /api/plants`
 * answers 200 with the plant; `DELETE /api/plants/{id}` answers 204, or 404 when there is no such plant the
 * caller has access to. Ids stay exact int64 both ways. Failures answer `{"error", "message"}` with the
 * app's values; the rarer validation corners (duplicate JSON keys, a few messages) are simpler than the
 * app's. Every answer carries the app's headers (its security headers, a request id, Content-Length: the
 * same bytes on the wire; the bench's contract check compares them).
 *
 * It is as fast as this stack allows, with nothing the contract does not need: statements prepared once,
 * headers as one flat array per answer, the common queries (`limit=N`, `limit=N&after=ID`) read without
 * URLSearchParams, JSON written by hand, a Content-Length so node:http never chunks.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import Database from 'better-sqlite3';

import { BODY_LIMIT_BYTES } from '../src/shared/limits';
import { withoutTrailingSlashes } from '../src/shared/text';
import { API_HEADERS, API_LIST_HEADERS } from './api-headers';
import { ALL_LIST_VERSION_SQL, listEtag, MARK, OWN_LIST_VERSION_SQL, plantJson, type PlantRow, prismaTimestamp, quoteIntegers } from './wire';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const PAGE_LIMIT_DEFAULT = 100;
const PAGE_LIMIT_MAX = 1000;
const LAST_USED_PRECISION_MS = 60_000;
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;
const BEARER = /^bearer(?: (.*))?$/i;
const DECIMAL_INT64 = /^-?\d{1,20}$/;
const CONTROL = /\p{Cc}/u;
const NOT_SPACE = /\S/u;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const databaseUrl = process.env.DATABASE_URL ?? '';
if (!databaseUrl.startsWith('file:')) throw new Error(`DATABASE_URL must be a file: URL, got "${databaseUrl}"`);
const port = Number(process.env.PORT ?? 4000);
const hostname = process.env.HOSTNAME_TO_BIND ?? '127.0.0.1';
const PUBLIC_URL = withoutTrailingSlashes(process.env.PUBLIC_URL ?? '');

// The app's connection: better-sqlite3 on the same file, WAL (set by the migrations), 10 s busy timeout, and
// the app's durability: every commit synced (synchronous=FULL) unless SQLITE_SYNCHRONOUS=normal, as in
// src/server/db.ts. better-sqlite3's own default under WAL is NORMAL, which would spare the floor the fsync
// the app pays on every create and delete.
const db = new Database(databaseUrl.slice('file:'.length), { timeout: 10_000 });
db.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS?.toLowerCase() === 'normal' ? 'NORMAL' : 'FULL'}`);

const tokenByHash = db.prepare<[string], { tokenId: number; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; userId: number; role: string }>(
  `SELECT t.id AS tokenId, t.lastUsedAt, t.expiresAt, t.revokedAt, u.id AS userId, u.role AS role
     FROM "ApiToken" t JOIN "User" u ON u.id = t.userId WHERE t.hash = ?`,
);
const touchToken = db.prepare<[string, number]>(`UPDATE "ApiToken" SET lastUsedAt = ? WHERE id = ?`);

const listOwn = db.prepare<[number, number], PlantRow>(`SELECT id, name, tag FROM "Plant" WHERE ownerId = ? ORDER BY id LIMIT ?`).safeIntegers(true);
const listOwnAfter = db
  .prepare<[number, bigint, number], PlantRow>(`SELECT id, name, tag FROM "Plant" WHERE ownerId = ? AND id > ? ORDER BY id LIMIT ?`)
  .safeIntegers(true);
const listAll = db.prepare<[number], PlantRow>(`SELECT id, name, tag FROM "Plant" ORDER BY id LIMIT ?`).safeIntegers(true);
const listAllAfter = db.prepare<[bigint, number], PlantRow>(`SELECT id, name, tag FROM "Plant" WHERE id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
const insertPlant = db.prepare<[bigint, string, string | null, number, string]>(
  `INSERT INTO "Plant" (id, name, tag, ownerId, createdAt) VALUES (?, ?, ?, ?, ?)`,
);
const deleteOwn = db.prepare<[bigint, number]>(`DELETE FROM "Plant" WHERE id = ? AND ownerId = ?`);
const deleteAny = db.prepare<[bigint]>(`DELETE FROM "Plant" WHERE id = ?`);
const ping = db.prepare(`SELECT 1`);
const ownListVersion = db.prepare<[number], string>(OWN_LIST_VERSION_SQL).pluck();
const allListVersion = db.prepare<[], string>(ALL_LIST_VERSION_SQL).pluck();

type Actor = { userId: number; admin: boolean };

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly value: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}


/** One answer: the headers as a flat [name, value, …] list (node:http's cheapest form) with a Content-Length. */
function send(response: ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}): void {
  const all = ['X-Request-Id', randomUUID(), ...API_HEADERS];
  if (body !== null) all.push('Content-Type', 'application/json');
  for (const name in headers) all.push(name, headers[name]!);
  if (body !== null) all.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(status, all);
  response.end(body ?? undefined);
}

/** The list's hot path: exactly 200 with the body and maybe a Link, without an extra object per answer. */
function sendList(response: ServerResponse, body: string, link: string | null, etag: string): void {
  const all = ['X-Request-Id', randomUUID(), ...API_LIST_HEADERS, 'Content-Type', 'application/json', 'ETag', etag];
  if (link !== null) all.push('Link', link);
  all.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(200, all);
  response.end(body);
}

function authenticate(request: IncomingMessage): Actor {
  const header = request.headers.authorization;
  const match = header ? BEARER.exec(header.trim()) : null;
  if (!match) throw new Refusal(401, 40100, 'a bearer token is required: send the header "Authorization: Bearer <token>"', { 'WWW-Authenticate': 'Bearer realm="plants"' });
  const token = match[1]?.trim() ?? '';
  const invalid = () =>
    new Refusal(401, 40101, 'the bearer token is not valid: it is unknown, revoked or expired', { 'WWW-Authenticate': 'Bearer realm="plants", error="invalid_token"' });
  if (!TOKEN_PATTERN.test(token)) throw invalid();
  const row = tokenByHash.get(createHash('sha256').update(token).digest('hex'));
  const now = Date.now();
  if (!row || row.revokedAt !== null || (row.expiresAt !== null && Date.parse(row.expiresAt) <= now)) throw invalid();
  if (row.lastUsedAt === null || now - Date.parse(row.lastUsedAt) > LAST_USED_PRECISION_MS) touchToken.run(prismaTimestamp(new Date(now)), row.tokenId);
  return { userId: row.userId, admin: row.role === 'admin' };
}

function int64(text: string, field: string, status: number, value: number): bigint {
  if (!DECIMAL_INT64.test(text)) throw new Refusal(status, value, `${field} must be an integer`);
  const id = BigInt(text);
  if (id < INT64_MIN || id > INT64_MAX) throw new Refusal(status, value, `${field} must be an int64`);
  return id;
}

/** `limit=N` or `limit=N&after=ID` with plain digits: what paging clients send; anything else takes URLSearchParams. */
const COMMON_QUERY = /^limit=(\d{1,4})(?:&after=(-?\d{1,20}))?$/;

function list(response: ServerResponse, actor: Actor, query: string): void {
  let limitText: string | undefined;
  let afterText: string | undefined;
  const common = COMMON_QUERY.exec(query);
  if (common) {
    limitText = common[1];
    afterText = common[2];
  } else {
    const parameters = new URLSearchParams(query);
    const limits = parameters.getAll('limit');
    const afters = parameters.getAll('after');
    if (limits.length > 1 || afters.length > 1) throw new Refusal(400, 40007, 'limit and after may be given once each');
    limitText = limits[0];
    afterText = afters[0];
  }
  let limit = PAGE_LIMIT_DEFAULT;
  if (limitText !== undefined) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : 0;
    if (limit < 1 || limit > PAGE_LIMIT_MAX) throw new Refusal(400, 40007, `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}`);
  }
  const after = afterText !== undefined ? int64(afterText, 'after', 400, 40007) : undefined;
  // The app's ETag, from the caller's version read before the list (the floor answers no If-None-Match).
  const version = actor.admin ? `all:${allListVersion.get()}` : `owner ${actor.userId}:${ownListVersion.get(actor.userId) ?? '0'}`;
  const etag = listEtag(version, { limit: limitText, after: afterText });
  const rows = actor.admin
    ? after === undefined
      ? listAll.all(limit + 1)
      : listAllAfter.all(after, limit + 1)
    : after === undefined
      ? listOwn.all(actor.userId, limit + 1)
      : listOwnAfter.all(actor.userId, after, limit + 1);
  const more = rows.length > limit;
  const count = more ? limit : rows.length;
  let body = '[';
  for (let i = 0; i < count; i++) body += (i === 0 ? '' : ',') + plantJson(rows[i]!);
  body += ']';
  // As the app: relative (it never echoes a Host), or under PUBLIC_URL when that is set.
  const link = more ? `<${PUBLIC_URL}/api/plants?limit=${limit}&after=${rows[limit - 1]!.id}>; rel="next"` : null;
  sendList(response, body, link, etag);
}

function textField(value: unknown, field: string, maxLength: number, required: boolean): string | null {
  if (value === undefined) {
    if (required) throw new Refusal(400, 40002, `${field} is required`);
    return null;
  }
  if (typeof value !== 'string' || value.startsWith(MARK)) throw new Refusal(400, 40003, `${field} must be a string`);
  if (value.length === 0) throw new Refusal(400, 40004, `${field} must not be empty`);
  if (value.length > maxLength && [...value].length > maxLength) throw new Refusal(400, 40004, `${field} must be at most ${maxLength} characters`);
  if (CONTROL.test(value)) throw new Refusal(400, 40004, `${field} must not contain control characters`);
  return value;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const type = (request.headers['content-type'] ?? '').split(';');
  const charset = type.slice(1).map((part) => part.trim().toLowerCase()).find((part) => part.startsWith('charset='));
  if (type[0]!.trim().toLowerCase() !== 'application/json' || (charset && !['charset=utf-8', 'charset=utf8', 'charset="utf-8"'].includes(charset))) {
    throw new Refusal(415, 41500, 'the body must be sent with Content-Type: application/json');
  }
  if (Number(request.headers['content-length'] ?? 0) > BODY_LIMIT_BYTES) throw new Refusal(413, 41300, `the body must be at most ${BODY_LIMIT_BYTES} bytes`);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT_BYTES) {
        request.removeAllListeners('data');
        request.pause();
        reject(new Refusal(413, 41300, `the body must be at most ${BODY_LIMIT_BYTES} bytes`, { connection: 'close' }));
      } else chunks.push(chunk);
    });
    request.once('end', resolve);
    request.once('error', reject);
  });
  try {
    return utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  } catch {
    throw new Refusal(400, 40000, 'the body is not valid UTF-8');
  }
}

async function create(request: IncomingMessage, response: ServerResponse, actor: Actor): Promise<void> {
  const text = await readBody(request);
  let body: unknown;
  try {
    body = JSON.parse(quoteIntegers(text));
  } catch (error) {
    throw new Refusal(400, 40000, `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, 40001, 'the body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== 'id' && key !== 'name' && key !== 'tag') throw new Refusal(400, 40005, `unknown field "${key}": a new plant has only id, name and tag`);
  }
  if (fields.id === undefined) throw new Refusal(400, 40002, 'id is required');
  if (typeof fields.id !== 'string' || !fields.id.startsWith(MARK)) throw new Refusal(400, 40003, 'id must be an integer');
  const id = BigInt(fields.id.slice(1));
  if (id < INT64_MIN || id > INT64_MAX) throw new Refusal(400, 40004, 'id must be an int64');
  const name = textField(fields.name, 'name', 200, true)!;
  if (!NOT_SPACE.test(name)) throw new Refusal(400, 40004, 'name must not be only white space');
  const tag = textField(fields.tag, 'tag', 100, false);
  try {
    insertPlant.run(id, name, tag, actor.userId, prismaTimestamp(new Date()));
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new Refusal(400, 40006, `a plant with id ${id} already exists`);
    throw error;
  }
  send(response, 200, plantJson({ id, name, tag }));
}

function remove(response: ServerResponse, actor: Actor, encodedId: string): void {
  let text: string;
  try {
    text = decodeURIComponent(encodedId);
  } catch {
    throw new Refusal(404, 40400, 'no such path');
  }
  const id = int64(text, 'id', 400, 40008);
  const { changes } = actor.admin ? deleteAny.run(id) : deleteOwn.run(id, actor.userId);
  if (changes === 0) throw new Refusal(404, 40401, `no plant with id ${id}`);
  send(response, 204, null);
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const method = request.method ?? 'GET';
  if (path === '/api/plants') {
    if (method !== 'GET' && method !== 'POST') throw new Refusal(405, 40500, `${method} is not allowed on ${path}`, { allow: 'GET, POST, HEAD, OPTIONS' });
    const actor = authenticate(request);
    if (method === 'GET') return list(response, actor, queryAt === -1 ? '' : url.slice(queryAt + 1));
    return create(request, response, actor);
  }
  if (path.startsWith('/api/plants/') && path.indexOf('/', '/api/plants/'.length) === -1) {
    if (method !== 'DELETE') throw new Refusal(405, 40500, `${method} is not allowed on ${path}`, { allow: 'DELETE, OPTIONS' });
    return remove(response, authenticate(request), path.slice('/api/plants/'.length));
  }
  if (path === '/api/health' && method === 'GET') {
    ping.get();
    return send(response, 200, '{"status":"ok","database":"ok"}');
  }
  throw new Refusal(404, 40400, `no such path: ${path}`);
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => {
    if (response.headersSent) return response.destroy();
    if (error instanceof Refusal) return send(response, error.status, JSON.stringify({ error: error.value, message: error.message }), error.headers);
    console.error(error);
    send(response, 500, JSON.stringify({ error: 50000, message: 'the server failed to handle this request' }));
  });
});

server.listen(port, hostname, () => console.log(`floor is serving on http://${hostname}:${port}`));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => {
      db.close();
      process.exit(0);
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
}
