/**
 * The benchmark's stack floor: the same three REST operations and the same wire contract as the floor
 * (bench/floor.ts), on the named stack used minimally. Beside the floor it tells what the stack itself costs,
 * and beside the app what the app adds to it. Per request, exactly what the floor does, through the stack:
 *
 * - the bearer token's SHA-256 looked up exactly as the floor does (a better-sqlite3 prepared statement on
 *   every request; "last used" written at most once a minute), so the two floors differ only in how the
 *   operation itself runs (issue 21 measured the stack's variants this way);
 * - one tRPC v11 procedure per operation, with a zod input and output schema, called server-side through a
 *   caller (`createCallerFactory(router)(ctx)`), whose resolver makes one call of Prisma 7's client on the
 *   same better-sqlite3 adapter as the app;
 * - ids as exact int64 JSON both ways, written and read by hand as the floor does (bench/wire.ts).
 *
 * Nothing else: no rate limit, no request log, no guard beyond the body limit. Prisma is used as it comes
 * (its adapter prepares each statement anew, its query compiler on V8's default tiers) and each operation takes
 * the cheapest form the client offers, measured: `$queryRaw` for the list (findMany costs more),
 * `$executeRaw` for the delete, `create` for the create. Run bundled on plain node
 * (lib/build.ts writes .bench-build/bench/stack-floor.mjs):
 *
 *   DATABASE_URL=file:/tmp/x.db PORT=4000 node .bench-build/bench/stack-floor.mjs
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { initTRPC, TRPCError } from '@trpc/server';
import Database from 'better-sqlite3';
import { z } from 'zod';

import { PrismaClient } from '../src/generated/prisma/client';
import { withoutTrailingSlashes } from '../src/shared/text';
import { API_HEADERS, API_LIST_HEADERS } from './api-headers';
import { ALL_LIST_VERSION_SQL, listEtag, MARK, OWN_LIST_VERSION_SQL, plantJson, type PlantRow, prismaTimestamp, quoteIntegers } from './wire';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const BODY_LIMIT_BYTES = 64 * 1024;
const PAGE_LIMIT_DEFAULT = 100;
const PAGE_LIMIT_MAX = 1000;
const LAST_USED_PRECISION_MS = 60_000;
const TOKEN_PATTERN = /^pst_[A-Za-z0-9_-]{43}$/;
const BEARER = /^bearer(?: (.*))?$/i;
const CONTROL = /\p{Cc}/u;
const NOT_SPACE = /\S/u;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const databaseUrl = process.env.DATABASE_URL ?? '';
if (!databaseUrl.startsWith('file:')) throw new Error(`DATABASE_URL must be a file: URL, got "${databaseUrl}"`);
const port = Number(process.env.PORT ?? 4000);
const hostname = process.env.HOSTNAME_TO_BIND ?? '127.0.0.1';
const PUBLIC_URL = withoutTrailingSlashes(process.env.PUBLIC_URL ?? '');

// The app's connection settings: the same adapter, 10 s busy timeout, every commit synced (synchronous=FULL).
const prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: databaseUrl, timeout: 10_000 }) });

// The token check, as the floor makes it (bench/floor.ts).
const tokens = new Database(databaseUrl.slice('file:'.length), { timeout: 10_000 });
tokens.pragma(`synchronous = ${process.env.SQLITE_SYNCHRONOUS?.toLowerCase() === 'normal' ? 'NORMAL' : 'FULL'}`);
const tokenByHash = tokens.prepare<[string], { tokenId: number; lastUsedAt: string | null; expiresAt: string | null; revokedAt: string | null; userId: number; role: string }>(
  `SELECT t.id AS tokenId, t.lastUsedAt, t.expiresAt, t.revokedAt, u.id AS userId, u.role AS role
     FROM "ApiToken" t JOIN "User" u ON u.id = t.userId WHERE t.hash = ?`,
);
const touchToken = tokens.prepare<[string, number]>(`UPDATE "ApiToken" SET lastUsedAt = ? WHERE id = ?`);

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

// --- the procedures ------------------------------------------------------------------------------------

/** A zod issue's message as the client's `{error, message}`: the floor's values for the same refusals. */
const int64 = (field: string) => z.bigint({ error: `${field} must be an integer` }).min(INT64_MIN, { error: `${field} must be an int64` }).max(INT64_MAX, { error: `${field} must be an int64` });
const text = (field: string, maxLength: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` })
    .refine((value) => value.length <= maxLength || [...value].length <= maxLength, { error: `${field} must be at most ${maxLength} characters` })
    .refine((value) => !CONTROL.test(value), { error: `${field} must not contain control characters` });
/** Query and path values are text; an int64 there is decimal digits. */
const decimal = <T extends z.ZodType>(parse: (digits: string) => unknown, schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && /^-?\d{1,20}$/.test(value) ? parse(value) : value), schema);

const plantOut = z.object({ id: z.bigint(), name: z.string(), tag: z.string().optional() });
const listInput = z.object({
  limit: decimal(Number, z.int({ error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` }).min(1, { error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` }).max(PAGE_LIMIT_MAX, { error: `limit must be an integer from 1 to ${PAGE_LIMIT_MAX}` })).optional(),
  after: decimal(BigInt, int64('after')).optional(),
});
const newPlant = z.strictObject({
  id: int64('id'),
  name: text('name', 200).refine((value) => NOT_SPACE.test(value), { error: 'name must not be only white space' }),
  tag: text('tag', 100).optional(),
});
const idInput = z.object({ id: decimal(BigInt, int64('id')) });

type Context = { actor: Actor; link?: string; etag?: string; query?: { limit?: string; after?: string } };
const t = initTRPC.context<Context>().create();

const toPlant = (row: PlantRow) => (row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag });

const router = t.router({
  list: t.procedure
    .input(listInput)
    .output(z.array(plantOut).max(PAGE_LIMIT_MAX))
    .query(async ({ ctx, input }) => {
      const limit = input.limit ?? PAGE_LIMIT_DEFAULT;
      const { actor } = ctx;
      const after = input.after;
      // The app's ETag, from the caller's version read before the list (no If-None-Match is answered here).
      const [versionRow] = actor.admin
        ? await prisma.$queryRawUnsafe<{ version: string }[]>(ALL_LIST_VERSION_SQL)
        : await prisma.$queryRawUnsafe<{ version: string }[]>(OWN_LIST_VERSION_SQL, actor.userId);
      ctx.etag = listEtag(actor.admin ? `all:${versionRow!.version}` : `owner ${actor.userId}:${versionRow?.version ?? '0'}`, ctx.query ?? {});
      const rows = actor.admin
        ? after === undefined
          ? await prisma.$queryRaw<PlantRow[]>`SELECT id, name, tag FROM "Plant" ORDER BY id LIMIT ${limit + 1}`
          : await prisma.$queryRaw<PlantRow[]>`SELECT id, name, tag FROM "Plant" WHERE id > ${after} ORDER BY id LIMIT ${limit + 1}`
        : after === undefined
          ? await prisma.$queryRaw<PlantRow[]>`SELECT id, name, tag FROM "Plant" WHERE "ownerId" = ${actor.userId} ORDER BY id LIMIT ${limit + 1}`
          : await prisma.$queryRaw<PlantRow[]>`SELECT id, name, tag FROM "Plant" WHERE "ownerId" = ${actor.userId} AND id > ${after} ORDER BY id LIMIT ${limit + 1}`;
      if (rows.length > limit) ctx.link = `<${PUBLIC_URL}/api/plants?limit=${limit}&after=${rows[limit - 1]!.id}>; rel="next"`;
      return rows.slice(0, limit).map(toPlant);
    }),
  create: t.procedure
    .input(newPlant)
    .output(plantOut)
    .mutation(async ({ ctx, input }) => {
      try {
        const row = await prisma.plant.create({
          data: { id: input.id, name: input.name, tag: input.tag ?? null, ownerId: ctx.actor.userId },
          select: { id: true, name: true, tag: true },
        });
        return toPlant(row);
      } catch (error) {
        if ((error as { code?: string }).code === 'P2002') throw new Refusal(400, 40006, `a plant with id ${input.id} already exists`);
        throw error;
      }
    }),
  delete: t.procedure
    .input(idInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      const { actor } = ctx;
      const changes = actor.admin
        ? await prisma.$executeRaw`DELETE FROM "Plant" WHERE id = ${input.id}`
        : await prisma.$executeRaw`DELETE FROM "Plant" WHERE id = ${input.id} AND "ownerId" = ${actor.userId}`;
      if (changes === 0) throw new Refusal(404, 40401, `no plant with id ${input.id}`);
    }),
});
const createCaller = t.createCallerFactory(router);

/** A procedure's failure as the floor answers it: a refusal as is, a failed input check with its first issue. */
function refusalOf(error: unknown, invalidStatus: number, invalidValue: number): unknown {
  if (!(error instanceof TRPCError)) return error;
  if (error.cause instanceof Refusal) return error.cause;
  const issues = (error.cause as { issues?: { message: string }[] } | undefined)?.issues;
  if (error.code === 'BAD_REQUEST' && issues?.[0]) return new Refusal(invalidStatus, invalidValue, issues[0].message);
  return error;
}

// --- HTTP ----------------------------------------------------------------------------------------------

/** One answer: the headers as a flat [name, value, …] list with a Content-Length, as the floor writes them. */
function send(response: ServerResponse, status: number, body: string | null, headers: Record<string, string> = {}, base = API_HEADERS): void {
  const all = ['X-Request-Id', randomUUID(), ...base];
  if (body !== null) all.push('Content-Type', 'application/json');
  for (const name in headers) all.push(name, headers[name]!);
  if (body !== null) all.push('Content-Length', String(Buffer.byteLength(body)));
  response.writeHead(status, all);
  response.end(body ?? undefined);
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

async function readBody(request: IncomingMessage): Promise<string> {
  const type = (request.headers['content-type'] ?? '').split(';');
  if (type[0]!.trim().toLowerCase() !== 'application/json') throw new Refusal(415, 41500, 'the body must be sent with Content-Type: application/json');
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

/** The body as JSON with integers exact (bigint); strings stay strings. */
function parseBody(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(quoteIntegers(text), (_key, value: unknown) => (typeof value === 'string' && value.startsWith(MARK) ? BigInt(value.slice(1)) : value));
  } catch (error) {
    throw new Refusal(400, 40000, `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, 40001, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

const COMMON_QUERY = /^limit=(\d{1,4})(?:&after=(-?\d{1,20}))?$/;

function listQuery(query: string): { limit?: string; after?: string } {
  const common = COMMON_QUERY.exec(query);
  if (common) return { limit: common[1], ...(common[2] === undefined ? {} : { after: common[2] }) };
  const parameters = new URLSearchParams(query);
  const limits = parameters.getAll('limit');
  const afters = parameters.getAll('after');
  if (limits.length > 1 || afters.length > 1) throw new Refusal(400, 40007, 'limit and after may be given once each');
  return { ...(limits[0] === undefined ? {} : { limit: limits[0] }), ...(afters[0] === undefined ? {} : { after: afters[0] }) };
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = request.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const method = request.method ?? 'GET';
  if (path === '/api/plants') {
    if (method !== 'GET' && method !== 'POST') throw new Refusal(405, 40500, `${method} is not allowed on ${path}`, { allow: 'GET, POST, HEAD, OPTIONS' });
    const context: Context = { actor: authenticate(request) };
    const caller = createCaller(context);
    if (method === 'GET') {
      const query = listQuery(queryAt === -1 ? '' : url.slice(queryAt + 1));
      context.query = query;
      const plants = await caller.list(query).catch((error: unknown) => {
        throw refusalOf(error, 400, 40007);
      });
      let body = '[';
      for (let i = 0; i < plants.length; i++) body += (i === 0 ? '' : ',') + plantJson(plants[i]!);
      return send(response, 200, `${body}]`, { ETag: context.etag!, ...(context.link === undefined ? {} : { Link: context.link }) }, API_LIST_HEADERS);
    }
    const fields = parseBody(await readBody(request));
    const plant = await caller.create(fields as z.input<typeof newPlant>).catch((error: unknown) => {
      throw refusalOf(error, 400, 40004);
    });
    return send(response, 200, plantJson(plant));
  }
  if (path.startsWith('/api/plants/') && path.indexOf('/', '/api/plants/'.length) === -1) {
    if (method !== 'DELETE') throw new Refusal(405, 40500, `${method} is not allowed on ${path}`, { allow: 'DELETE, OPTIONS' });
    let id: string;
    try {
      id = decodeURIComponent(path.slice('/api/plants/'.length));
    } catch {
      throw new Refusal(404, 40400, 'no such path');
    }
    const caller = createCaller({ actor: authenticate(request) });
    await caller.delete({ id }).catch((error: unknown) => {
      throw refusalOf(error, 400, 40008);
    });
    return send(response, 204, null);
  }
  if (path === '/api/health' && method === 'GET') {
    await prisma.$queryRaw`SELECT 1`;
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

// The app's durability: every commit synced. The setting is per connection, so it is the first statement.
await prisma.$executeRawUnsafe(`PRAGMA synchronous = ${process.env.SQLITE_SYNCHRONOUS?.toLowerCase() === 'normal' ? 'NORMAL' : 'FULL'}`);
server.listen(port, hostname, () => console.log(`stack floor is serving on http://${hostname}:${port}`));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => {
      tokens.close();
      void prisma.$disconnect().finally(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
}
