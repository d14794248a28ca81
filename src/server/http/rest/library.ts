/**
 * The one place that knows trpc-to-openapi 3.3.0 from the inside. The REST chain calls procedures through
 * the library's node:http handler (its public entry), built once per process, and hands it a request object
 * shaped so the library does no work the chain has done already. That shape relies on three internals,
 * checked by library.test.ts, which fails loudly when an upgrade changes them:
 *
 * 1. `instanceof Request` tells the library a fetch request, whose `signal` it takes as it stands; an
 *    IncomingMessage would be converted into a whole new fetch Request first.
 * 2. `'body' in req` makes it take `req.body` as the parsed body instead of reading the stream.
 * 3. A preset `req.query` is taken as the parsed query (only the declared parameters are passed, because
 *    the library collects the query into a plain object, where `constructor` or `__proto__` would break it).
 *
 * The library writes its answer with JSON.stringify (bigint throws) and its error body adds `code` and
 * `issues`; the chain reads results and errors from the callbacks instead and never sends the library's bytes.
 */
import type { AnyTRPCRouter, TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';

import { operationStarted, type Problem, problemFromError } from '@/server/problems';
import type { Context } from '@/server/trpc/init';

import { stringifyExactJson } from './exact-json';
import type { HttpMethod, RestRoute } from './routing';

/** `operationStarted`: whether a failure came from the operation itself, not from a check before it (problems.ts). */
export type Outcome = { ok: true; json: string | null } | { ok: false; error: unknown; problem: Problem; operationStarted: boolean };

/** One procedure call in flight: what the library's shared callbacks need to know of it, and what they found. */
type LibraryCall = { context: Context; route: RestRoute; outcome?: Outcome };

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
/** Nothing aborts a call once the chain has the whole request; the library only passes its signal on. */
const NEVER_ABORTED = new AbortController().signal;

/**
 * Validation issues name a field; where the field came from decides the error value. The shared
 * translation knows bodies only, so path and query fields are re-sorted here, where that is known.
 */
function placeProblem(problem: Problem, route: RestRoute): Problem {
  const fromInput = ['missingField', 'wrongType', 'invalidValue', 'unknownField'].includes(problem.kind);
  if (!fromInput || !problem.field) return problem;
  if (route.pathParameters.includes(problem.field)) return { ...problem, kind: 'invalidPathParameter' };
  // Without a body, every other field came from the query.
  if (route.method === 'GET' || route.method === 'DELETE') return { ...problem, kind: 'invalidQueryParameter' };
  return problem;
}

export function createProcedureCaller(router: AnyTRPCRouter) {
  /** responseMeta is given the context only, not the request. */
  const callsByContext = new WeakMap<Context, LibraryCall>();

  const handler = createOpenApiNodeHttpHandler({
    router,
    createContext: ({ req }: { req: LibraryRequest }) => req.call.context,
    responseMeta: ({ ctx, data, errors }: { ctx?: Context; data: unknown[]; errors: unknown[] }) => {
      const call = ctx && callsByContext.get(ctx);
      if (call && errors.length === 0) {
        const [result] = data;
        call.outcome = { ok: true, json: result === undefined ? null : stringifyExactJson(result) };
        // The library writes the body with JSON.stringify, which throws on bigint; the chain has written it
        // exactly above, so the library's copy is reduced to `null`.
        if (typeof result === 'object' && result !== null) Object.defineProperty(result, 'toJSON', { value: () => null });
      }
      return {};
    },
    onError: ({ error, req }: { error: TRPCError; req: LibraryRequest }) => {
      const { call } = req;
      const problem = placeProblem(problemFromError(error, call.context.exactRestInput), call.route);
      call.outcome = { ok: false, error, problem, operationStarted: operationStarted(error) };
      // The library writes zod's issues into its own error body with JSON.stringify, which throws on the
      // bigint bounds of an int64 issue. The chain has read them above and never sends the library's body.
      if (error.cause && 'issues' in error.cause && Array.isArray(error.cause.issues)) error.cause.issues.length = 0;
    },
  } as unknown as Parameters<typeof createOpenApiNodeHttpHandler>[0]) as unknown as LibraryHandler;

  /**
   * Runs the route's procedure with `body` (parsed, exact in `context.exactRestInput`) and the route's
   * declared query parameters. `path` is the request path below the base path, still percent-encoded, as
   * the library matches it.
   */
  return async function callProcedure(route: RestRoute, path: string, searchParams: URLSearchParams, body: Record<string, unknown> | undefined, context: Context): Promise<Outcome> {
    const call: LibraryCall = { context, route };
    callsByContext.set(context, call);
    const query: Record<string, string[]> = {};
    for (const [name, value] of searchParams) if (route.queryParameters.includes(name)) (query[name] ??= []).push(value);
    // Own data properties, because the Request prototype's getters would otherwise answer, and throw, for an
    // object that is not a real Request.
    const request = Object.create(Request.prototype, {
      method: { value: route.method },
      url: { value: path },
      headers: { value: body ? JSON_BODY_HEADERS : NO_HEADERS },
      body: { value: body ? {} : null },
      query: { value: query },
      signal: { value: NEVER_ABORTED },
      call: { value: call },
    }) as LibraryRequest;
    const response = { statusCode: 0, setHeader() {}, end() {} };
    await handler(request, response);
    if (!call.outcome) throw new Error(`trpc-to-openapi answered ${response.statusCode} without reaching the procedure`);
    return call.outcome;
  };
}
