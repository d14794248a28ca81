import 'server-only';

import { randomUUID } from 'node:crypto';

import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';

import { type AuthState, authFailure, resolveBearer } from '@/server/auth/bearer';
import { can, type Permission } from '@/server/auth/permissions';
import { INTERNAL_ERROR_MESSAGE, problemFromError } from '@/server/problems';
import { AppError, errorCatalog } from '@/shared/errors';

import { transformer } from './transformer';

export type { AuthState };

export type Context = {
  /** The request's id: in its log line, in the X-Request-Id header, and in the message of a server fault. */
  requestId: string;
  /** Resolved by the front before either door runs, so both rate-limit the same token the same way. */
  auth: AuthState;
  /**
   * What a procedure tells the REST door beside its result. A shared object, since middlewares hand
   * procedures a copy of the context: `nextPageQuery` is the query of the next page, for the `Link`
   * header. (The admin page asks for one row more than it shows instead.)
   */
  responseHints: { nextPageQuery?: Record<string, string> };
  /**
   * The REST request's input exactly as sent: the JSON body with integers as bigint, path parameters
   * percent-decoded. Set by the REST chain, because trpc-to-openapi parses bodies with JSON.parse, which
   * rounds int64 ids to the nearest double, and passes path parameters on still encoded.
   */
  exactRestInput?: Record<string, unknown>;
};

export function contextFor(auth: AuthState, requestId: string = randomUUID()): Context {
  return { requestId, auth, responseHints: {} };
}

/** A context for a caller outside HTTP (tests, scripts): the same bearer rule as the doors. */
export async function createContext({ authorization }: { authorization: string | null }): Promise<Context> {
  return contextFor(await resolveBearer(authorization));
}

const trpcCodeByStatus: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_SUPPORTED',
  408: 'TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_CONTENT',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

/** An AppError as tRPC raises errors, with the code whose HTTP status matches the error's own. */
export function asTrpcError(error: AppError): TRPCError {
  return new TRPCError({ code: trpcCodeByStatus[error.status] ?? 'INTERNAL_SERVER_ERROR', message: error.message, cause: error });
}

/**
 * Subscriptions (the plants' live feed) over SSE: a ping every 15 s keeps proxies and the server's idle
 * timeout from closing a quiet stream, and a stream ends after a minute, when the client reconnects through
 * the door's guards again (a revoked token stops there) and resumes with its last event id.
 */
export const SSE_MAX_DURATION_MS = 60_000;

const t = initTRPC.context<Context>().meta<OpenApiMeta>().create({
  transformer,
  sse: { ping: { enabled: true, intervalMs: 15_000 }, maxDurationMs: SSE_MAX_DURATION_MS, client: { reconnectAfterInactivityMs: 40_000 } },
  errorFormatter({ shape, error, input, ctx }) {
    const problem = problemFromError(error, input);
    const requestId = ctx?.requestId;
    return {
      ...shape,
      message: problem.kind === 'internal' && requestId ? `${INTERNAL_ERROR_MESSAGE} (request id ${requestId})` : problem.message,
      data: {
        code: shape.data.code,
        httpStatus: errorCatalog[problem.kind].status,
        path: shape.data.path,
        error: errorCatalog[problem.kind].value,
        field: problem.field ?? null,
      },
    };
  },
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one middleware in front of every procedure: the actor (a missing or invalid token is a 401), the
 * permission when the procedure needs one, the REST door's exact input laid over the library's lossy copy
 * (before input parsing), and AppErrors turned into TRPCErrors with the code of their status. One step
 * instead of four: tRPC copies the whole call's options at every middleware, which was the largest single
 * cost of a request in its code (`npm run bench -- --profile`).
 */
function guard(permission?: Permission) {
  return t.middleware(async ({ ctx, next, getRawInput }) => {
    const { auth } = ctx;
    if (auth.status !== 'signedIn') throw asTrpcError(authFailure(auth.status));
    if (permission && !can(auth.actor, permission)) throw asTrpcError(new AppError('forbidden', `this needs the "${permission}" permission`));
    const exact = ctx.exactRestInput;
    const options = { ctx: { actor: auth.actor } };
    // next() takes ctx and getRawInput together at run time (its types offer one or the other).
    if (exact) Object.assign(options, { getRawInput: async () => ({ ...((await getRawInput()) as object), ...exact }) });
    const result = await next(options);
    if (!result.ok && result.error.cause instanceof AppError) throw asTrpcError(result.error.cause);
    return result;
  });
}

export const protectedProcedure = t.procedure.use(guard());

export const procedureNeeding = (permission: Permission) => t.procedure.use(guard(permission));
