import type { ServerResponse } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';

import { type AuthState, authFailure } from '@/server/auth/bearer';
import { contextFor } from '@/server/trpc/init';

import type { Authenticate } from '../guards/auth';
import type { FrontRequest } from '../request';
import { jsonReply, problemReply, type Reply, refuse } from '../reply';

import { checkContentType } from './content-type';
import { type CorsOrigins, preflightHeaders } from './cors';
import { answerOnce, IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './idempotency';
import { readJsonObject } from './json-body';
import { createProcedureCaller } from './library';
import { nextPageLink } from './paging-link';
import { buildRouteTable } from './routing';

export const API_BASE_PATH = '/api';
const REALM = 'Bearer realm="plants"';
const JSON_TYPES = ['application/json'];
const PATCH_TYPES = ['application/merge-patch+json', 'application/json'];

/** 401 with the challenge of RFC 6750: `error="invalid_token"` when a token was sent but is not valid. */
export function requireToken(auth: AuthState): void {
  if (auth.status === 'signedIn') return;
  const { kind, message } = authFailure(auth.status);
  throw refuse(kind, message, { 'WWW-Authenticate': auth.status === 'invalid' ? `${REALM}, error="invalid_token"` : REALM });
}

/**
 * The REST door. It knows the contract's wire rules and nothing about plants, and settles what
 * trpc-to-openapi leaves open, in the order a request meets them: the route (404), the method (405 with
 * `Allow`; OPTIONS answers it), the token (401, or 429 from the shared guard) before any body is read, the
 * content type (415), the body (413, 408, 400), the procedure (once per Idempotency-Key where the
 * operation declares one), and the answer (exact int64, 204 for no result, `Link` for the next page,
 * `{error, message}` for every failure).
 */
export function createRestChain(options: { router: AnyTRPCRouter; authenticate: Authenticate; publicUrl: string | undefined; cors: CorsOrigins }) {
  const { router, authenticate, publicUrl, cors } = options;
  const match = buildRouteTable(router, API_BASE_PATH);
  const callProcedure = createProcedureCaller(router);

  return async function answerRest(request: FrontRequest, response: ServerResponse): Promise<Reply> {
    request.trace.door = 'rest';
    const { url } = request;
    const found = match(request.method, url.pathname);
    if (found.kind === 'wrongMethod') {
      const allow = { Allow: found.allowed };
      if (request.method !== 'OPTIONS') throw refuse('methodNotAllowed', `${request.method} is not allowed on ${url.pathname}; use ${found.allowed}`, allow);
      return jsonReply(204, null, { ...allow, ...preflightHeaders(request.raw, cors, found.allowed) });
    }
    const { route, pathValues } = found;

    // Authentication comes before the body is read, so an anonymous client cannot make the server read it.
    const auth = await authenticate(request);
    if (route.protect) requireToken(auth);
    const context = contextFor(auth, request.id);
    // Where the operation declares Idempotency-Key: a malformed key is refused before the body is read.
    const idempotencyKey = route.requestHeaders.includes(IDEMPOTENCY_KEY_HEADER) ? readIdempotencyKey(request.raw) : undefined;

    let body: Record<string, unknown> | undefined;
    if (route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH') {
      checkContentType(request.raw.headers['content-type'], route.method === 'PATCH' ? PATCH_TYPES : JSON_TYPES);
      body = await readJsonObject(request, response);
    }
    // A path value cannot come in the body too (`{"id": …}` in a PATCH): the body would be silently overruled.
    const clash = body && route.pathParameters.find((name) => Object.hasOwn(body, name));
    if (clash) throw refuse('unknownField', `unknown field "${clash}": the ${clash} comes from the path and cannot be set in the body`);
    context.exactRestInput = { ...body, ...pathValues };
    const answer = async (): Promise<Reply> => {
      const outcome = await callProcedure(route, url.pathname.slice(API_BASE_PATH.length), url.searchParams, body, context);
      if (!outcome.ok) {
        if (outcome.problem.kind === 'internal') throw outcome.error;
        return problemReply(outcome.problem);
      }
      if (outcome.json === null) return jsonReply(204, null);
      const { nextPageQuery } = context.responseHints;
      return jsonReply(200, outcome.json, nextPageQuery ? { Link: nextPageLink(url.pathname, nextPageQuery, publicUrl) } : {});
    };
    if (idempotencyKey === undefined || auth.status !== 'signedIn') return answer();
    return answerOnce({ userId: auth.actor.userId, key: idempotencyKey, operation: `${route.method} ${route.template}`, body }, answer);
  };
}
