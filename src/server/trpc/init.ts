import 'server-only';

import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from '@trpc/server';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';

import { type Actor, can, type Permission } from '@/server/auth/permissions';
import { verifyToken } from '@/server/tokens/service';
import { AppError, errorCatalog } from '@/shared/errors';
import { problemFromError } from '@/server/problems';

export type AuthState = { status: 'signedIn'; actor: Actor; tokenId: number } | { status: 'missing' } | { status: 'invalid' };

export type Context = {
  auth: AuthState;
  /**
   * What a procedure tells the REST door beside its result. A shared object, since middlewares hand
   * procedures a copy of the context: `nextPageQuery` is the query of the next page, for the `Link`
   * header. (The admin page asks for one row more than it shows instead.)
   */
  responseHints: { nextPageQuery?: Record<string, string> };
  /**
   * The REST request's input exactly as sent: the JSON body with integers as bigint, path parameters
   * percent-decoded. Set by the REST edge, because trpc-to-openapi parses bodies with JSON.parse, which
   * rounds int64 ids to the nearest double, and passes path parameters on still encoded.
   */
  exactRestInput?: Record<string, unknown>;
};

/** `Bearer <token>`, the scheme word in any case (RFC 6750 with RFC 9110's case-insensitive schemes). */
const BEARER = /^bearer(?: +(.*))?$/i;

export async function resolveAuth(authorization: string | null): Promise<AuthState> {
  const match = authorization ? BEARER.exec(authorization.trim()) : null;
  if (!match) return { status: 'missing' };
  const token = match[1]?.trim();
  if (!token) return { status: 'invalid' };
  const check = await verifyToken(token);
  return check.ok ? { status: 'signedIn', actor: check.actor, tokenId: check.tokenId } : { status: 'invalid' };
}

export async function createContext({ authorization }: { authorization: string | null }): Promise<Context> {
  return { auth: await resolveAuth(authorization), responseHints: {} };
}

const trpcCodeByStatus: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
};

const t = initTRPC.context<Context>().meta<OpenApiMeta>().create({
  transformer: superjson,
  errorFormatter({ shape, error, input }) {
    const problem = problemFromError(error, input);
    return {
      ...shape,
      message: problem.message,
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

/** AppErrors become TRPCErrors with the matching code, so the tRPC door answers with the right status. */
const appErrorsAsTrpcErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof AppError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeByStatus[cause.status] ?? 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
  }
  return result;
});

/** Runs before input parsing: lays the REST edge's exact input over the library's lossy one. */
const exactRestInput = t.middleware(async ({ ctx, next, getRawInput }) => {
  const exact = ctx.exactRestInput;
  if (!exact) return next();
  return next({ getRawInput: async () => ({ ...((await getRawInput()) as object), ...exact }) });
});

export const publicProcedure = t.procedure.use(appErrorsAsTrpcErrors).use(exactRestInput);

export const protectedProcedure = publicProcedure.use(({ ctx, next }) => {
  const { auth } = ctx;
  if (auth.status === 'signedIn') return next({ ctx: { actor: auth.actor } });
  throw auth.status === 'missing'
    ? new AppError('missingToken', 'a bearer token is required: send the header "Authorization: Bearer <token>"')
    : new AppError('invalidToken', 'the bearer token is not valid: it is unknown, revoked or expired');
});

export const procedureNeeding = (permission: Permission) =>
  protectedProcedure.use(({ ctx, next }) => {
    if (!can(ctx.actor, permission)) throw new AppError('forbidden', `this needs the "${permission}" permission`);
    return next();
  });
