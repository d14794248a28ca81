import type { ServerResponse } from 'node:http';

import { type AnyTRPCRouter, getTRPCErrorShape, transformTRPCResponse } from '@trpc/server';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';

import { authFailure } from '@/server/auth/auth-state';
import { holdStream } from '@/server/auth/held-streams';
import type { Logger } from '@/server/log';
import { type DeclaredProcedure, errorsOf, INTERNAL_ERROR_MESSAGE } from '@/server/problems';
import { asTrpcError, contextFor, type Context } from '@/server/trpc/init';
import { AppError, type ErrorKind } from '@/shared/errors';
import { BATCH_MAX_CALLS, BODY_LIMIT_BYTES, bodyUnits } from '@/shared/limits';

import type { Authenticate } from './guards/auth';
import { decodeUtf8, readBody } from './guards/body';
import { refuseDeepJson } from './guards/json-depth';
import type { WaitForTurn } from './guards/work-queue';
import { type FrontRequest, notUtf8Refusal, noteCharged, notingCharges, parameterNotUtf8 } from './request';
import { Refusal, refuse } from './reply';
import { cutOffWhenStalled } from './stalled-stream';
import { checkContentType } from './rest/content-type';

export const TRPC_BASE_PATH = '/api/trpc';
const ALLOW = 'GET, HEAD, POST';

const JSON_TYPES = ['application/json'];

/**
 * Every failure a procedure can answer on this door: what it declares (`errorsOf`), and for a file streamed as it
 * is made, tRPC's own 415 to a client that did not ask for a stream (`trpc-accept: application/jsonl`).
 */
export function trpcErrorKinds(procedure: DeclaredProcedure): ErrorKind[] {
  return [...errorsOf(procedure), ...(procedure.meta?.file === undefined ? [] : (['unsupportedMediaType'] as const))];
}

/**
 * A subscription whose token no longer allows it ends itself, with the token's 401 where it can (plants/live/
 * feed.ts); one whose client does not read cannot be told, and its connection is cut this long after.
 */
const ENDED_STREAM_GRACE_MS = 250;

/**
 * The admin page's door: tRPC's own node:http adapter on the same router, behind the same guards as REST
 * (rate limits charged per call, the body limit and timeouts, the batch cap). Refusals made before the
 * adapter runs are written in tRPC's wire format too, through the router's own error formatter, so the
 * page's client reads them like any other error. In order: the method (405), the batch cap (400), the
 * token (401, 429), the media type and coding (415), the body, then its turn among the requests being
 * worked on. Every procedure on this door needs a
 * token, so a request without a valid one is refused before a byte of its body is read, as on REST.
 */
export function createTrpcDoor(options: { router: AnyTRPCRouter; authenticate: Authenticate; waitForTurn: WaitForTurn; log: Logger; stallMs: number }) {
  const { router, authenticate, waitForTurn, log, stallMs } = options;
  const config = router._def._config;

  /** `path` as the adapter would name it (without one, superjson would write `undefined` into the answer's meta). */
  function writeRefusal(response: ServerResponse, refusal: Refusal, path: string): void {
    const error = asTrpcError(new AppError(refusal.problem.kind, refusal.problem.message));
    const shape = getTRPCErrorShape({ config, error, type: 'unknown', path: path.slice(0, 200), input: undefined, ctx: undefined });
    const body = JSON.stringify(transformTRPCResponse(config, { error: shape }));
    response.statusCode = getHTTPStatusCodeFromError(error);
    for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
    response.setHeader('Content-Type', 'application/json');
    response.setHeader('Content-Length', Buffer.byteLength(body));
    response.end(body);
  }

  /** The procedure paths of the call ("plants.list" or, batched, "plants.list,me"), checked before tRPC reads them. */
  function callCount(request: FrontRequest, encodedPath: string): number {
    let paths: string;
    try {
      paths = decodeURIComponent(encodedPath);
    } catch {
      throw refuse('routeNotFound', 'the procedure path is not valid percent-encoding');
    }
    return request.url.searchParams.get('batch') === '1' ? paths.split(',').length : 1;
  }

  return async function serveTrpc(request: FrontRequest, response: ServerResponse): Promise<void> {
    request.trace.door = 'trpc';
    const encodedPath = request.url.pathname.slice(TRPC_BASE_PATH.length + 1);
    let context: Context;
    try {
      if (!ALLOW.split(', ').includes(request.method)) {
        throw refuse('methodNotAllowed', `${request.method} is not allowed on ${TRPC_BASE_PATH}; use ${ALLOW}`, { Allow: ALLOW });
      }
      const calls = callCount(request, encodedPath);
      request.trace.calls = calls;
      if (calls > BATCH_MAX_CALLS) throw refuse('batchTooLarge', `a batch may hold at most ${BATCH_MAX_CALLS} calls; this one holds ${calls}`);
      const auth = await authenticate(request, calls);
      if (auth.status === 'signedIn') noteCharged(request, calls);
      // An anonymous body is never read: a POST without a valid token is refused before it. A GET has no body,
      // and its refusal comes from the procedure, in the form the call asked for (a subscription's is an SSE
      // error event, which the page's client reads as final instead of reconnecting).
      if (auth.status !== 'signedIn' && request.method === 'POST') {
        const { kind, message } = authFailure(auth.status);
        throw refuse(kind, message);
      }
      context = contextFor(auth, request.id, notingCharges(request, (units) => authenticate.chargeMore(auth, units)));
      if (parameterNotUtf8(request.url, ['input'])) throw notUtf8Refusal('input');
      // The adapter takes a body that is already a string as it is; reading it here puts it under the
      // same limit and timeouts as REST's. (Its own refusal of another media type is plain text.)
      if (request.method === 'POST') checkContentType(request.raw.headers['content-type'], JSON_TYPES);
      const bytes = request.method === 'POST' ? await readBody(request, response) : undefined;
      if (bytes) {
        await authenticate.chargeForBody(auth, bytes.byteLength);
        noteCharged(request, bodyUnits(bytes.byteLength));
      }
      const body = bytes && decodeUtf8(bytes);
      // Before tRPC parses the input and superjson walks it.
      if (body !== undefined) refuseDeepJson(body, 'the body');
      for (const input of request.url.searchParams.getAll('input')) refuseDeepJson(input, 'the input');
      // The calls are the work; reading the body was waiting (see work-queue.ts).
      await waitForTurn(calls, response);
      Object.assign(request.raw, { body });
    } catch (error) {
      if (error instanceof Refusal) return writeRefusal(response, error, encodedPath);
      log.error({ requestId: request.id, err: error }, 'request failed');
      return writeRefusal(response, refuse('internal', `${INTERNAL_ERROR_MESSAGE} (request id ${request.id})`), encodedPath);
    }
    // A stream held open with this token ends when the token's access does (auth/held-streams.ts).
    const procedure = (router._def.procedures as Record<string, { _def?: { type?: string } } | undefined>)[encodedPath];
    const subscription = request.method === 'GET' && procedure?._def?.type === 'subscription';
    // A feed whose client stops reading is cut off (its place among the feeds is the token's share).
    if (subscription) cutOffWhenStalled(response, stallMs);
    const release =
      context.auth.status === 'signedIn' && subscription
        ? holdStream({
            tokenId: context.auth.tokenId,
            actor: context.auth.actor,
            end: () => {
              setTimeout(() => {
                if (!response.writableEnded) response.destroy();
              }, ENDED_STREAM_GRACE_MS).unref();
            },
          })
        : undefined;
    try {
      await nodeHTTPRequestHandler({
        router,
        req: request.raw,
        res: response,
        path: encodedPath,
        createContext: () => context,
        maxBatchSize: BATCH_MAX_CALLS,
        maxBodySize: BODY_LIMIT_BYTES,
        // A call refused by its charge (a bulk delete past the bucket) says when to come back.
        responseMeta: () => ({ headers: context.responseHints.headers ?? {} }),
        onError: ({ error, path }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR') log.error({ requestId: request.id, procedure: path, err: error.cause ?? error }, 'request failed');
        },
      });
    } finally {
      release?.();
    }
  };
}
