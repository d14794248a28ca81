import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';

import { type Config, DEFAULT_STREAM_STALL_TIMEOUT_MS } from '@/server/config';
import type { Logger } from '@/server/log';
import type { FrontObserver } from './observability/front-observer';
import { createMetricsRoute, METRICS_PATH, metricsTokenCheck } from './observability/metrics-route';
import { INTERNAL_ERROR_MESSAGE } from '@/server/problems';

import { DOCS_BASE_PATH, serveDocs } from './docs-door';
import { type AuthGuardOptions, createAuthGuard } from './guards/auth';
import { createClientAddresses } from './guards/client-address';
import { createWorkQueue } from './guards/work-queue';
import { logWhenAnswered } from './guards/request-log';
import { API_HEADERS } from './guards/security-headers';
import { createMcpDoor, MCP_PATH } from './mcp-door';
import type { PagesDoor } from './pages';
import { type FrontRequest, PLACEHOLDER_ORIGIN, readTarget } from './request';
import { baseHeaders, jsonReply, problemReply, type Reply, Refusal, refuse, writeReply } from './reply';
import { API_BASE_PATH, createRestChain } from './rest/chain';
import { corsHeaders } from './rest/cors';
import { writeStream } from './stalled-stream';
import { stringifyExactJson } from './rest/exact-json';
import { buildOpenApiDocument } from './rest/openapi';
import { createTrpcDoor, TRPC_BASE_PATH } from './trpc-door';

export type FrontOptions = {
  config: Pick<Config, 'RATE_LIMIT_PER_TOKEN' | 'RATE_LIMIT_AUTH_FAILURES' | 'TRUST_PROXY' | 'CORS_ALLOWED_ORIGINS' | 'PUBLIC_URL'> &
    Partial<Pick<Config, 'METRICS' | 'METRICS_TOKEN' | 'STREAM_STALL_TIMEOUT_MS'>>;
  /** Request metrics and traces (src/server/observability); none in the front's own tests. */
  observer?: FrontObserver;
  router: AnyTRPCRouter;
  log: Logger;
  /** Where each request's line goes (log.ts's `requestLogger`); `log` when not given. */
  requestLog?: Logger;
  /** The rate-limit budgets every instance shares (PostgreSQL); without it each limit is this process's. */
  sharedBudget?: AuthGuardOptions['sharedBudget'];
  /** Resolves when the database answers. */
  checkHealth: () => Promise<void>;
  /** Figures `GET /api/health` adds for the holder of METRICS_TOKEN (the webhook queue), and for nobody else. */
  operatorHealth?: () => Promise<Record<string, unknown>>;
  /** True once a shutdown began: `GET /api/health` answers 503 (draining) while requests are still served. */
  isDraining?: () => boolean;
  pages: PagesDoor;
};

const API_HEADER_ENTRIES = Object.entries(API_HEADERS);
const API_BASE = baseHeaders(API_HEADERS);

/**
 * The headers every answer starts with: its request id, and under /api the API headers. A door that writes
 * its own answer (pages, tRPC, MCP, the CSV export) gets them set on the response before it runs; an answer
 * the front writes from a Reply gets them in its one `writeHead` (reply.ts), which is cheaper.
 */
function setRequestId(response: ServerResponse, request: FrontRequest): void {
  response.setHeader('X-Request-Id', request.id);
}
/** Until the request target is read: the URL a failure before that is logged with. */
const NO_TARGET_YET = new URL(`${PLACEHOLDER_ORIGIN}/`);

/** Methods some part of the server answers: what `OPTIONS *` lists. */
const SERVER_METHODS = 'GET, HEAD, POST, PATCH, DELETE, OPTIONS';

const under = (pathname: string, base: string) => pathname === base || pathname.startsWith(`${base}/`);

/**
 * The one front of the server. Every request passes the same guards in this order, then reaches its door:
 *
 *   request id and log line → request target and Host (400) → pages, or for /api: security headers →
 *   tRPC door | MCP door | docs | health and the OpenAPI document | REST chain
 *
 * The API doors take the shared guards (rate limits per token and per address, body limit and timeouts)
 * from the same instances, so a token has one bucket across them. Connection limits sit below this, in the
 * node:http server (server.ts). Whatever goes wrong, the answer is an error in the door's format and a
 * fault is logged under the request id, never a crash.
 */
export function createFront(options: FrontOptions) {
  const { config, router, log, checkHealth, operatorHealth, isDraining, pages } = options;
  const stallMs = config.STREAM_STALL_TIMEOUT_MS ?? DEFAULT_STREAM_STALL_TIMEOUT_MS;
  const requestLog = options.requestLog ?? log;
  const authenticate = createAuthGuard({
    perToken: config.RATE_LIMIT_PER_TOKEN,
    authFailuresPerAddress: config.RATE_LIMIT_AUTH_FAILURES,
    sharedBudget: options.sharedBudget,
    log,
  });
  // One queue for every door: the calls being worked on at once, server-wide.
  const waitForTurn = createWorkQueue();
  const answerRest = createRestChain({ router, authenticate, waitForTurn, publicUrl: config.PUBLIC_URL, cors: config.CORS_ALLOWED_ORIGINS });
  const serveTrpc = createTrpcDoor({ router, authenticate, waitForTurn, log, stallMs });
  const serveMcp = createMcpDoor({ router, authenticate, waitForTurn, log, cors: config.CORS_ALLOWED_ORIGINS, publicUrl: config.PUBLIC_URL });
  const clientAddresses = createClientAddresses(config.TRUST_PROXY);
  const serveMetrics = config.METRICS === 'off' ? undefined : createMetricsRoute(config.METRICS_TOKEN);
  const isOperator = config.METRICS === 'off' || config.METRICS_TOKEN === undefined ? () => false : metricsTokenCheck(config.METRICS_TOKEN);
  const observer = options.observer;

  let openApiJson: string | undefined;
  /** Answered by the front itself, without a token. */
  const serviceRoutes = new Map<string, (request: FrontRequest) => Promise<Reply>>([
    [
      `${API_BASE_PATH}/health`,
      // What a load balancer asks: whether to send requests here. Anonymous callers learn that and no more; the
      // webhook queue's figures are the METRICS_TOKEN holder's (and /api/metrics's).
      async (request) => {
        if (isDraining?.()) throw refuse('draining', 'this instance is shutting down: send new requests to another one');
        const reachable = await checkHealth().then(
          () => true,
          () => false,
        );
        if (!reachable) throw refuse('unavailable', 'the database cannot be reached');
        const figures = operatorHealth && isOperator(request) ? await operatorHealth().catch(() => ({})) : {};
        return jsonReply(200, JSON.stringify({ status: 'ok', database: 'ok', ...figures }));
      },
    ],
    [
      `${API_BASE_PATH}/openapi.json`,
      async () => {
        // Lossless: the int64 bounds are written with every digit.
        openApiJson ??= stringifyExactJson(buildOpenApiDocument(router));
        return jsonReply(200, openApiJson, { 'Cache-Control': 'no-cache' });
      },
    ],
  ]);

  async function serveService(request: FrontRequest, answer: (request: FrontRequest) => Promise<Reply>): Promise<Reply> {
    request.trace.door = 'service';
    if (request.method === 'GET' || request.method === 'HEAD') return answer(request);
    const allow = { Allow: 'GET, HEAD, OPTIONS' };
    if (request.method === 'OPTIONS') return jsonReply(204, null, allow);
    throw refuse('methodNotAllowed', `${request.method} is not allowed on ${request.url.pathname}; use GET, HEAD`, allow);
  }

  function internalFailure(request: FrontRequest, error: unknown): Reply {
    log.error({ requestId: request.id, method: request.method, path: request.url.pathname, err: error }, 'request failed');
    return problemReply({ kind: 'internal', message: `${INTERNAL_ERROR_MESSAGE} (request id ${request.id})` });
  }

  function setApiHeaders(request: FrontRequest, response: ServerResponse): void {
    setRequestId(response, request);
    for (const [name, value] of API_HEADER_ENTRIES) response.setHeader(name, value);
  }

  async function serveApi(request: FrontRequest, response: ServerResponse): Promise<void> {
    const { pathname } = request.url;
    if (under(pathname, TRPC_BASE_PATH)) {
      setApiHeaders(request, response);
      return serveTrpc(request, response);
    }
    if (under(pathname, MCP_PATH)) {
      setApiHeaders(request, response);
      return serveMcp(request, response);
    }
    let reply: Reply;
    try {
      const service = serviceRoutes.get(pathname);
      if (pathname === METRICS_PATH && serveMetrics) {
        reply = await serveService(request, () => serveMetrics(request));
      } else {
        reply = under(pathname, DOCS_BASE_PATH)
          ? await serveDocs(request)
          : service
            ? await serveService(request, service)
            : await answerRest(request, response);
      }
    } catch (error) {
      reply = error instanceof Refusal ? problemReply(error.problem, error.headers) : internalFailure(request, error);
    }
    // Without an Origin header there are none (cors.ts).
    if (request.trace.door !== 'docs' && request.raw.headers.origin !== undefined) Object.assign(reply.headers, corsHeaders(request.raw, config.CORS_ALLOWED_ORIGINS));
    if (reply.stream) {
      setApiHeaders(request, response);
      return writeStream(response, reply, stallMs);
    }
    writeReply(response, reply, { head: request.method === 'HEAD', requestId: request.id, base: API_BASE });
  }

  async function handle(raw: IncomingMessage, response: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    const request: FrontRequest = {
      id: randomUUID(),
      raw,
      method: raw.method ?? 'GET',
      url: NO_TARGET_YET,
      clientAddress: clientAddresses.of(raw),
      trace: {},
    };
    logWhenAnswered(request, response, startedAt, requestLog, observer?.answered);
    if (observer) return observer.request(request, response, () => route(request, raw, response));
    return route(request, raw, response);
  }

  async function route(request: FrontRequest, raw: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const target = readTarget(raw);
      if (target.kind === 'asterisk') {
        request.trace.door = 'front';
        return writeReply(response, jsonReply(204, null, { Allow: SERVER_METHODS }), { requestId: request.id });
      }
      request.url = target.url;
      const door = under(request.url.pathname, API_BASE_PATH)
        ? () => serveApi(request, response)
        : () => {
            setRequestId(response, request);
            return pages(request, response);
          };
      await (observer ? observer.door(request, door) : door());
    } catch (error) {
      request.trace.door ??= 'front';
      const reply = error instanceof Refusal ? problemReply(error.problem, { ...API_HEADERS, ...error.headers }) : internalFailure(request, error);
      // A client that cannot write a request line or a Host header gets no second try on this connection.
      if (error instanceof Refusal && error.problem.kind === 'malformedRequest') reply.headers.Connection = 'close';
      if (response.headersSent) response.destroy();
      else writeReply(response, reply, { requestId: request.id });
    }
  }

  return handle;
}
