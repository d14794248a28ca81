import { randomUUID } from 'node:crypto';

import type { AnyTRPCRouter, TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';

import { errorCatalog, type ErrorKind } from '@/shared/errors';
import { INTERNAL_ERROR_MESSAGE, type Problem, problemFromError } from '@/server/problems';
import type { Context } from '@/server/trpc/init';

import { parseExactJson, stringifyExactJson } from './exact-json';
import { buildOpenApiDocument } from './openapi';
import { createRateLimiter, type RateDecision, type RateLimitPolicy } from './rate-limit';
import { buildRouteTable, type HttpMethod, type RestRoute, type RouteMatch } from './routes';

export const API_BASE_PATH = '/api';
export const BODY_LIMIT_BYTES = 64 * 1024;
/** A body that sends nothing for this long is given up, so slow clients cannot hold the server. */
export const BODY_IDLE_TIMEOUT_MS = 10_000;

/** What the edge writes to the log: pino's call shape, so a pino logger fits as is. */
export type EdgeLogger = {
  info: (entry: Record<string, unknown>, message: string) => void;
  error: (entry: Record<string, unknown>, message: string) => void;
};

export type EdgeOptions = {
  router: AnyTRPCRouter;
  createContext: (options: { authorization: string | null }) => Promise<Context>;
  log: EdgeLogger;
  /** True when the database answers; `GET /api/health` reports it. */
  checkHealth: () => Promise<boolean>;
  /** Requests per token, and failed authentications per client address; null turns one off. */
  rateLimits?: { perToken: RateLimitPolicy | null; authFailuresPerAddress: RateLimitPolicy | null };
  /** Origins that browsers may call the API from; CORS is off when absent. */
  cors?: { allowedOrigins: '*' | readonly string[] };
  /** Take the client address from the last X-Forwarded-For entry (set when behind one reverse proxy). */
  trustProxy?: boolean;
};

/** What the server knows of the connection a request came on. */
export type ClientConnection = { remoteAddress?: string };

/**
 * What the edge reads of a request. A fetch Request gives it (Next.js's route handler, tests), and so
 * does a node:http request without building one (src/server/http/node-bridge.ts).
 */
export type EdgeRequest = {
  method: string;
  url: URL;
  /** A header as fetch's Headers.get gives it: fields of that name joined with ", ", null when none. */
  header: (lowercaseName: string) => string | null;
  /** The body's reader, asked for once the edge means to read; null when the request has no body. */
  openBody: () => BodyReader | null;
};

/** The part of a web stream's reader the edge uses; reads may reject when the client goes away. */
export type BodyReader = {
  read: () => Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel: () => Promise<void>;
};

/** An answer before it is put on the wire; header names as the edge writes them, each given once. */
export type EdgeReply = { status: number; headers: Record<string, string>; body: string | null };

const BODY_METHODS = new Set<string>(['POST', 'PUT', 'PATCH']);
const REALM = 'Bearer realm="plants"';

class EdgeRefusal extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.message);
  }
}

const refuse = (kind: ErrorKind, message: string, headers?: Record<string, string>) =>
  new EdgeRefusal({ kind, message }, headers);

function jsonReply(status: number, body: string | null, headers: Record<string, string> = {}): EdgeReply {
  return {
    status,
    headers: { ...(body === null ? {} : { 'Content-Type': 'application/json' }), 'Cache-Control': 'no-store', ...headers },
    body,
  };
}

function problemReply({ kind, message }: Problem, headers: Record<string, string> = {}): EdgeReply {
  const { status, value } = errorCatalog[kind];
  return jsonReply(status, JSON.stringify({ error: value, message }), headers);
}

/** Percent-decodes each segment; undefined when one is not valid percent-encoding. */
function decodeSegments(path: string): string[] | undefined {
  try {
    return path.split('/').slice(1).map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

function allowHeader(methods: HttpMethod[]): string {
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/** The media type must be application/json; a charset parameter may only say UTF-8 (RFC 8259). */
function checkContentType(contentType: string | null): void {
  const [mediaType, ...parameters] = (contentType ?? '').split(';').map((part) => part.trim().toLowerCase());
  if (mediaType !== 'application/json') {
    throw refuse('unsupportedMediaType', `the body must be sent with Content-Type: application/json${contentType ? `, not ${contentType}` : ''}`);
  }
  const charset = parameters.find((parameter) => parameter.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw refuse('unsupportedMediaType', `the body must be UTF-8, not ${charset}`);
  }
}

const tooLarge = () => refuse('bodyTooLarge', `the body must be at most ${BODY_LIMIT_BYTES} bytes`);

/** Reads at most the limit and stops there: a huge body costs us 64 KiB, not its size. */
async function readBody(request: EdgeRequest): Promise<string> {
  const declared = Number(request.header('content-length') ?? 0);
  if (declared > BODY_LIMIT_BYTES) throw tooLarge();
  const reader = request.openBody();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const nextChunk = async () => {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(refuse('bodyTimeout', `no part of the body arrived for ${BODY_IDLE_TIMEOUT_MS / 1000} seconds`)), BODY_IDLE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([reader.read(), stalled]);
    } catch (error) {
      await reader.cancel().catch(() => {});
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
  for (let chunk = await nextChunk(); !chunk.done; chunk = await nextChunk()) {
    size += chunk.value.byteLength;
    if (size > BODY_LIMIT_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(chunk.value);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw refuse('invalidJson', 'the body is not valid UTF-8');
  }
}

async function readJsonObject(request: EdgeRequest): Promise<Record<string, unknown>> {
  checkContentType(request.header('content-type'));
  const text = await readBody(request);
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    const reason = text.trim() === '' ? 'it is empty' : error instanceof RangeError ? 'it nests too deeply' : (error as Error).message;
    throw refuse('invalidJson', `the body is not valid JSON: ${reason}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw refuse('bodyNotObject', `the body must be a JSON object, not ${body === null ? 'null' : Array.isArray(body) ? 'an array' : typeof body === 'bigint' ? 'a number' : `a ${typeof body}`}`);
  }
  return body as Record<string, unknown>;
}

/**
 * Validation issues name a field; where the field came from decides the error value. The shared
 * translation knows bodies only, so path and query fields are re-sorted here, where that is known.
 */
function placeProblem(problem: Problem, route: RestRoute): Problem {
  const fromInput = ['missingField', 'wrongType', 'invalidValue', 'unknownField'].includes(problem.kind);
  if (!fromInput || !problem.field) return problem;
  if (route.pathParameters.includes(problem.field)) return { ...problem, kind: 'invalidPathParameter' };
  if (!BODY_METHODS.has(route.method)) return { ...problem, kind: 'invalidQueryParameter' };
  return problem;
}

function tooManyRequests(decision: Extract<RateDecision, { allowed: false }>, subject: string): EdgeRefusal {
  const seconds = String(decision.retryAfterSeconds);
  return refuse('tooManyRequests', `too many requests ${subject}; try again in ${seconds} s`, {
    'Retry-After': seconds,
    'RateLimit-Limit': String(decision.policy.burst),
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': seconds,
    'RateLimit-Policy': `${decision.policy.burst};w=${Math.ceil(decision.policy.burst / decision.policy.perSecond)}`,
  });
}

/** One procedure call in flight: what the library's shared callbacks need to know of it, and what they found. */
type LibraryCall = {
  context: Context;
  route: RestRoute;
  outcome?: { ok: true; json: string | null } | { ok: false; error: unknown; problem: Problem };
};

/** The request object trpc-to-openapi's node:http handler is given, with the call it belongs to. */
type LibraryRequest = {
  method: HttpMethod;
  url: string;
  headers: { get: (name: string) => string | null };
  body: Record<string, unknown> | null;
  query: Record<string, string[]>;
  signal: AbortSignal;
  call: LibraryCall;
};

type LibraryHandler = (request: LibraryRequest, response: { statusCode: number; setHeader: () => void; end: () => void }) => Promise<void>;

const JSON_BODY_HEADERS = { get: (name: string) => (name === 'content-type' ? 'application/json' : null) };
const NO_HEADERS = { get: () => null };
/** Nothing aborts a call once the edge has the whole request; the library only passes its signal on. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * What the library reads of a request, ready-made: the path below the base path (still percent-encoded,
 * as the library matches it), only the query parameters the procedure takes (the library collects the
 * query into a plain object, where a parameter named `constructor` or `__proto__` would break it), and a
 * body it can take as is (the procedure reads the exact one; the library's rounding no longer matters).
 * It inherits from Request because that is how the library tells a fetch request, whose signal it takes
 * as it stands, from an IncomingMessage, which it would convert into a whole new fetch Request first.
 */
function libraryRequest(url: URL, body: Record<string, unknown> | undefined, route: RestRoute, call: LibraryCall): LibraryRequest {
  const query: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) {
    if (route.queryParameters.includes(name)) (query[name] ??= []).push(value);
  }
  // Own data properties, because the Request prototype's getters would otherwise answer, and throw, for
  // an object that is not a real Request.
  return Object.create(Request.prototype, {
    method: { value: route.method },
    url: { value: url.pathname.slice(API_BASE_PATH.length) },
    headers: { value: body ? JSON_BODY_HEADERS : NO_HEADERS },
    body: { value: body ? {} : null },
    query: { value: query },
    signal: { value: NEVER_ABORTED },
    call: { value: call },
  }) as LibraryRequest;
}

const EXPOSED_HEADERS = 'Link, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, WWW-Authenticate';

/**
 * The REST door. It knows HTTP and the contract's wire rules and nothing about plants: it settles what
 * trpc-to-openapi leaves open (405 vs 404, auth before reading a body, body size, content type, exact
 * int64 both ways, 204, `Link`, the {error, message} shape), adds what the library does not have (rate
 * limits, CORS, request logs, health) and hands the rest to the library. It takes a fetch Request and
 * gives a Response, so it runs as a Next.js route handler; its `answer` takes the few parts of a request
 * it reads and gives the reply as data, so the node:http server builds no fetch objects per request.
 */
export function createRestEdge(options: EdgeOptions) {
  const { router, createContext, log, checkHealth } = options;
  const matchRoute = buildRouteTable(router);
  const perToken = options.rateLimits?.perToken ? createRateLimiter(options.rateLimits.perToken) : undefined;
  const perAddress = options.rateLimits?.authFailuresPerAddress
    ? createRateLimiter(options.rateLimits.authFailuresPerAddress)
    : undefined;
  let openApiJson: string | undefined;

  /** Paths the edge answers itself, without a token. */
  const ownRoutes: Record<string, () => Promise<EdgeReply>> = {
    'openapi.json': async () => {
      openApiJson ??= JSON.stringify(buildOpenApiDocument(router));
      return jsonReply(200, openApiJson, { 'Cache-Control': 'no-cache' });
    },
    health: async () => {
      const databaseReachable = await checkHealth().catch(() => false);
      if (!databaseReachable) throw refuse('unavailable', 'the database cannot be reached');
      return jsonReply(200, JSON.stringify({ status: 'ok', database: 'ok' }));
    },
  };

  function clientAddress(request: EdgeRequest, connection: ClientConnection | undefined): string {
    const forwarded = options.trustProxy ? request.header('x-forwarded-for')?.split(',').at(-1)?.trim() : undefined;
    return forwarded || connection?.remoteAddress || 'unknown';
  }

  function allowedOrigin(request: EdgeRequest): string | undefined {
    const origin = request.header('origin');
    const allowed = options.cors?.allowedOrigins;
    if (!origin || !allowed) return undefined;
    if (allowed === '*') return '*';
    return allowed.includes(origin) ? origin : undefined;
  }

  /**
   * trpc-to-openapi's node:http handler, built on first use and kept: building it compiles the route
   * regexps of every procedure (and, outside production, generates the whole OpenAPI document to check
   * the router), which its fetch adapter did again on every request. What differs per request reaches
   * the shared callbacks through the request object the library hands back.
   */
  let library: LibraryHandler | undefined;
  function openApiLibrary(): LibraryHandler {
    library ??= createOpenApiNodeHttpHandler({
      router,
      createContext: ({ req }: { req: LibraryRequest }) => req.call.context,
      responseMeta: ({ ctx, data, errors }: { ctx?: Context; data: unknown[]; errors: unknown[] }) => {
        const call = ctx && callsByContext.get(ctx);
        if (call && errors.length === 0) {
          const [result] = data;
          call.outcome = { ok: true, json: result === undefined ? null : stringifyExactJson(result) };
          // The library writes the body with JSON.stringify, which throws on bigint; this edge has written
          // it exactly above, so the library's copy is reduced to `null`.
          if (typeof result === 'object' && result !== null) Object.defineProperty(result, 'toJSON', { value: () => null });
        }
        return {};
      },
      onError: ({ error, req }: { error: TRPCError; req: LibraryRequest }) => {
        const { call } = req;
        call.outcome = { ok: false, error, problem: placeProblem(problemFromError(error, call.context.exactRestInput), call.route) };
        // The library writes zod's issues into its own error body with JSON.stringify, which throws on
        // the bigint bounds of an int64 issue and would fail the request. This edge has read them above
        // and never sends the library's body.
        if (error.cause && 'issues' in error.cause && Array.isArray(error.cause.issues)) error.cause.issues.length = 0;
      },
    } as unknown as Parameters<typeof createOpenApiNodeHttpHandler>[0]) as unknown as LibraryHandler;
    return library;
  }
  /** responseMeta is given the context only, not the request. */
  const callsByContext = new WeakMap<Context, LibraryCall>();

  async function callProcedure(url: URL, body: Record<string, unknown> | undefined, route: RestRoute, context: Context): Promise<EdgeReply> {
    const call: LibraryCall = { context, route };
    callsByContext.set(context, call);
    const response = { statusCode: 0, setHeader() {}, end() {} };
    await openApiLibrary()(libraryRequest(url, body, route, call), response);
    const { outcome } = call;
    if (!outcome) throw new Error(`trpc-to-openapi answered ${response.statusCode} without reaching the procedure`);
    if (!outcome.ok) {
      if (outcome.problem.kind === 'internal') throw outcome.error;
      return problemReply(outcome.problem);
    }
    if (outcome.json === null) return jsonReply(204, null);
    const headers: Record<string, string> = {};
    const { nextPageQuery } = context.responseHints;
    if (nextPageQuery) {
      const next = new URL(url.pathname, url.origin);
      next.search = new URLSearchParams(nextPageQuery).toString();
      headers.Link = `<${next.href}>; rel="next"`;
    }
    return jsonReply(200, outcome.json, headers);
  }

  async function respond(
    request: EdgeRequest,
    origin: string | undefined,
    connection: ClientConnection | undefined,
    trace: { userId?: number },
  ): Promise<EdgeReply> {
    const { url } = request;
    const segments = decodeSegments(url.pathname.slice(API_BASE_PATH.length));
    if (!segments) throw refuse('routeNotFound', `no such path: ${url.pathname}`);
    const isHead = request.method === 'HEAD';
    const method = isHead ? 'GET' : request.method;

    const ownRoute = ownRoutes[segments.join('/')];
    const match: RouteMatch = ownRoute
      ? method === 'GET'
        ? { kind: 'found', route: { method: 'GET', template: url.pathname, pathParameters: [], protect: false, queryParameters: [] }, pathValues: {} }
        : { kind: 'wrongMethod', allowed: ['GET'] }
      : matchRoute(method, segments);
    if (match.kind === 'noSuchPath') throw refuse('routeNotFound', `no such path: ${url.pathname}`);
    if (match.kind === 'wrongMethod') {
      const headers: Record<string, string> = { Allow: allowHeader(match.allowed) };
      if (request.method !== 'OPTIONS') {
        throw refuse('methodNotAllowed', `${request.method} is not allowed on ${url.pathname}; use ${headers.Allow}`, headers);
      }
      if (origin && request.header('access-control-request-method') !== null) {
        Object.assign(headers, {
          'Access-Control-Allow-Methods': headers.Allow,
          'Access-Control-Allow-Headers': 'Authorization, Content-Type',
          'Access-Control-Max-Age': '600',
        });
      }
      return jsonReply(204, null, headers);
    }
    if (ownRoute) return ownRoute();
    const { route, pathValues } = match;

    // Authentication comes before the body is read, so an anonymous client cannot make the server read it.
    const context = await createContext({ authorization: request.header('authorization') });
    const { auth } = context;
    if (auth.status === 'signedIn') {
      trace.userId = auth.actor.userId;
      const decision = perToken?.(String(auth.tokenId));
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'for this token');
    } else if (route.protect) {
      const decision = auth.status === 'invalid' ? perAddress?.(clientAddress(request, connection)) : undefined;
      if (decision && !decision.allowed) throw tooManyRequests(decision, 'with invalid tokens from this address');
      const sent = auth.status === 'invalid';
      throw refuse(
        sent ? 'invalidToken' : 'missingToken',
        sent
          ? 'the bearer token is not valid: it is unknown, revoked or expired'
          : 'a bearer token is required: send the header "Authorization: Bearer <token>"',
        { 'WWW-Authenticate': sent ? `${REALM}, error="invalid_token"` : REALM },
      );
    }

    const hasBody = BODY_METHODS.has(route.method);
    const body = hasBody ? await readJsonObject(request) : undefined;
    context.exactRestInput = { ...body, ...pathValues };
    const reply = await callProcedure(url, body, route, context);
    return isHead ? { ...reply, body: null } : reply;
  }

  async function answer(request: EdgeRequest, connection?: ClientConnection): Promise<EdgeReply> {
    const startedAt = performance.now();
    const requestId = randomUUID();
    const path = request.url.pathname;
    const origin = allowedOrigin(request);
    const trace: { userId?: number } = {};
    let reply: EdgeReply;
    try {
      reply = await respond(request, origin, connection, trace);
    } catch (error) {
      if (error instanceof EdgeRefusal) {
        reply = problemReply(error.problem, error.headers);
      } else {
        log.error({ requestId, method: request.method, path, err: error }, 'request failed');
        reply = problemReply({ kind: 'internal', message: `${INTERNAL_ERROR_MESSAGE} (request id ${requestId})` });
      }
    }
    const { headers } = reply;
    headers['X-Request-Id'] = requestId;
    if (origin) {
      headers['Access-Control-Allow-Origin'] = origin;
      headers['Access-Control-Expose-Headers'] = EXPOSED_HEADERS;
      if (origin !== '*') headers.Vary = headers.Vary ? `${headers.Vary}, Origin` : 'Origin';
    }
    // Never the query string's secrets or any header: path, status, timing and who.
    log.info(
      { requestId, method: request.method, path, status: reply.status, ms: Math.round((performance.now() - startedAt) * 10) / 10, userId: trace.userId },
      'request',
    );
    return reply;
  }

  async function handleRestRequest(request: Request, connection?: ClientConnection): Promise<Response> {
    const reply = await answer(
      {
        method: request.method,
        url: new URL(request.url),
        header: (name) => request.headers.get(name),
        openBody: () => request.body?.getReader() ?? null,
      },
      connection,
    );
    return new Response(reply.body, { status: reply.status, headers: reply.headers });
  }

  /** The fetch handler, and `answer` for servers that can give the edge a request without building a fetch Request. */
  return Object.assign(handleRestRequest, { answer });
}
