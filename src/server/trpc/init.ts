import 'server-only';

import { randomUUID } from 'node:crypto';

import { type AnyTRPCRouter, initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY, type TRPCProcedureBuilder, type TRPCUnsetMarker } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { z } from 'zod';

import { type AuthState, authFailure } from '@/server/auth/auth-state';
import { type Actor, can, type Permission } from '@/server/auth/permissions';
import { INTERNAL_ERROR_MESSAGE, problemFromError } from '@/server/problems';
import { inProcedureSpan } from '@/server/observability/tracing';
import { AppError, errorCatalog, type ErrorMap } from '@/shared/errors';

import { transformer } from './transformer';

export type { AuthState };

export type Context = {
  /** The request's id: in its log line, in the X-Request-Id header, and in the message of a server fault. */
  requestId: string;
  /** Resolved by the front before either door runs, so both rate-limit the same token the same way. */
  auth: AuthState;
  /**
   * What a procedure tells the doors beside its result. A shared object, since the guard hands
   * procedures a copy of the context: `nextPageQuery` is the query of the next page, for REST's `Link`
   * header (the admin page asks for one row more than it shows instead); `headers` go on the answer
   * whatever it is (a 429's `Retry-After`). For a `conditional` procedure whose version is a read
   * to run (PostgreSQL), the REST door sets `versionWanted` on a 200 without `If-None-Match` instead of
   * running it, and the procedure hands back `version`, read no later than its answer's rows (with them, in
   * one statement, where it can: plants/versions.ts), for the ETag. The other doors ask for none.
   */
  responseHints: { nextPageQuery?: Record<string, string>; headers?: Record<string, string>; versionWanted?: boolean; version?: string };
  /**
   * Charges the call `units` more against its token's rate-limit bucket, beyond the one unit every call paid
   * at its door: for the part of a declared cost beyond it (`.declare`), or for what a call finds only as it
   * works (a bulk change's plants). Rejects with a 429 AppError, with its `Retry-After` in
   * `responseHints.headers`: awaited before the work, since on PostgreSQL the bucket may have to ask the budget
   * the instances share. Does nothing where no door charges (a caller in a test).
   */
  charge: (units: number) => Promise<void>;
  /**
   * As `charge`, but a refusal is answered rather than thrown: how long until the bucket holds the units. For
   * work that waits for its units instead of failing half done (a file being streamed: plants/export.ts).
   */
  takeUnits: (units: number) => Promise<{ retryAfterMs: number } | undefined>;
  /**
   * How many procedure calls of this request have started (a tRPC batch makes several): each after the
   * first starts on a turn of the event loop of its own (see `guard`).
   */
  callsStarted: number;
};

type ChargeRefusal = { message: string; headers: Record<string, string>; retryAfterMs: number };

/**
 * How a door takes more from the caller's bucket: undefined when it could, else the 429's words and headers;
 * at once, or once the shared budget answered (http/guards/rate-limit.ts).
 */
export type ChargeBucket = (units: number) => ChargeRefusal | undefined | Promise<ChargeRefusal | undefined>;

export function contextFor(auth: AuthState, requestId: string = randomUUID(), chargeBucket?: ChargeBucket): Context {
  const responseHints: Context['responseHints'] = {};
  return {
    requestId,
    auth,
    responseHints,
    callsStarted: 0,
    async takeUnits(units) {
      const refused = await chargeBucket?.(units);
      return refused && { retryAfterMs: refused.retryAfterMs };
    },
    async charge(units) {
      const refused = await chargeBucket?.(units);
      if (!refused) return;
      responseHints.headers = { ...responseHints.headers, ...refused.headers };
      throw new AppError('tooManyRequests', refused.message);
    },
  };
}

/**
 * What a procedure declares beside its code, read by the doors:
 * - `openapi`: its REST operation (a procedure with it is public: it gets an operation and an MCP tool).
 *   `errorResponses` is not used: the document's failures follow from `errors` (below).
 * - `permission`: the permission it needs (set by `procedureNeeding`), so a door can tell whom a procedure
 *   serves without calling it.
 * - `mcp.description`: for the MCP door, a description written for a model choosing a tool, where the
 *   OpenAPI text speaks of HTTP.
 * - `conditional`: for a query whose answer, given its input, changes only with data versioned per caller:
 *   that version. The REST door makes the answer's ETag from it and answers `If-None-Match` with a 304
 *   without calling the procedure (http/rest/conditional.ts). The version is known at once (a string: the
 *   door may answer before the request takes a turn in the work queue) or is a read to run on its turn.
 * - `file`: for a query whose result is a file sent as it is made (an async iterable of text chunks), the file's
 *   media type: REST streams it as that type (http/rest/chain.ts), tRPC to a streaming link; it is no MCP tool.
 * - `cost`: what a call costs (see `Cost`), and `errors`: the failures it answers (see `ErrorMap`), both set by
 *   `.declare()`, which every procedure must pass through.
 */
export type ProcedureMeta = {
  openapi?: Omit<NonNullable<OpenApiMeta['openapi']>, 'errorResponses'>;
  permission?: Permission;
  mcp?: { description?: string };
  conditional?: (actor: Actor) => string | (() => Promise<string>);
  file?: string;
  cost?: Cost<never>;
  errors?: ErrorMap;
};

/**
 * What one call of a procedure costs against its token's rate-limit bucket, in units of about a millisecond of
 * the server's work (docs/api.md, "Rate limits: a call is charged what it does"): the whole call, the one unit
 * its door charged included. A number, or worked out from the parsed input and the caller: from what the input
 * asks for (a list's limit, a bulk change's ids, a name search) and, where the work grows with what is stored,
 * from a bounded read of how much there is to read (a read far cheaper than the work it prices). Charged before
 * the procedure's work starts; a refused charge is a 429 and nothing is done.
 */
export type Cost<Input> = number | ((input: Input, caller: { actor: Actor }) => number | Promise<number>);

/** What a procedure declares about itself beside its schemas, in one place: its cost and its failures. */
export type Declaration<Input> = { cost: Cost<Input>; errors: ErrorMap };

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

const t = initTRPC.context<Context>().meta<ProcedureMeta>().create({
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

/** The procedures of a router, nested routers walked, by their dotted path. */
export function proceduresOf(router: AnyTRPCRouter): [path: string, procedure: { _def: { type: string; meta?: ProcedureMeta } }][] {
  return Object.entries(router._def.procedures as Record<string, { _def: { type: string; meta?: ProcedureMeta } }>);
}

/**
 * A router, refused when one of its procedures has not declared its cost and errors: a procedure cannot be served
 * without them (the builder has no query, mutation or subscription before `.declare()`; this catches one made around it).
 */
export const createTRPCRouter = ((record: Parameters<typeof t.router>[0]) => {
  const router = t.router(record);
  const undeclared = proceduresOf(router).filter(([, procedure]) => procedure._def.meta?.cost === undefined || procedure._def.meta.errors === undefined);
  if (undeclared.length > 0) throw new Error(`procedures without a declared cost and errors (.declare({ cost, errors })): ${undeclared.map(([path]) => path).join(', ')}`);
  return router;
}) as typeof t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one guard in front of every procedure: its own turn, the actor (a missing or invalid token is a 401),
 * the permission when the procedure needs one, and AppErrors turned into TRPCErrors with the code of their
 * status. It is the procedure's caller (tRPC's `experimental_caller`), not a middleware: tRPC copies the whole
 * call's options twice at every middleware level (its `_objectSpread2` helper, the largest single cost of a
 * call in its code; `npm run bench -- --profile`), and a caller wraps the call without adding a level: a
 * list-shaped call (zod input and output, 20 rows) cost 23.1 µs of CPU with the guard as a middleware and
 * 18.4 µs with it as the caller, as much as with no guard at all (in process). It is
 * tRPC's own hook for wrapping a procedure's call (still marked experimental in 11.x); the builder keeps its
 * usual type (`GuardedBuilder`), so routers and the page's hooks see ordinary procedures. Since the caller is part of the
 * procedure itself, every way to call one passes it: tRPC's HTTP adapter, `callTRPCProcedure` (the REST and
 * MCP doors), a server-side caller (`guard.test.ts` calls every procedure of the app each way).
 *
 * Its own turn: the calls of a tRPC batch would otherwise run back to back as one block (better-sqlite3
 * answers synchronously), and a batch of ten pages of 1,000 plants held every other request ~50 ms (issue
 * 18). The first call of a request runs on the request's own turn (the I/O that brought it, or the
 * setImmediate the work queue started it on: http/guards/work-queue.ts); every further call waits for a
 * turn of its own.
 */
type ProcedureCaller = Parameters<typeof t.procedure.experimental_caller>[0];

function guard(permission?: Permission): ProcedureCaller {
  return async ({ args, invoke }) => {
    // What tRPC calls a procedure with (the adapter, `callTRPCProcedure`, a server-side caller alike).
    const options = args[0] as Parameters<typeof invoke>[0];
    const { ctx, path, type } = options;
    // The door's context object itself, shared by the calls of a batch.
    if (ctx.callsStarted++ > 0) await new Promise((resolve) => setImmediate(resolve));
    const { auth } = ctx;
    if (auth.status !== 'signedIn') throw asTrpcError(authFailure(auth.status));
    if (permission && !can(auth.actor, permission)) throw asTrpcError(new AppError('forbidden', `this needs the "${permission}" permission`));
    // The procedure sees the context with the actor, as a copy: a batch's calls share the door's object.
    const call = { ...options, ctx: { ...ctx, actor: auth.actor } };
    // The procedure's span while tracing is on (its queries are its children), a plain call otherwise.
    const result = await inProcedureSpan(path, type, () =>
      invoke(call).then(
        (data) => ({ ok: true as const, data }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    );
    if (result.ok) return result.data;
    const { error } = result;
    if (error instanceof TRPCError && error.cause instanceof AppError) throw asTrpcError(error.cause);
    throw error;
  };
}

/** A guarded builder as tRPC types it once its cost is declared: the context carries the actor the guard adds. */
type Guarded<InputIn, InputOut, OutputIn, OutputOut> = TRPCProcedureBuilder<Context, ProcedureMeta, { actor: Actor }, InputIn, InputOut, OutputIn, OutputOut, false>;
type Unset = TRPCUnsetMarker;
/** A procedure's input as its resolver and its cost see it (none: undefined). */
type InputOf<InputOut> = InputOut extends Unset ? undefined : InputOut;

/**
 * A guarded procedure's builder before its cost is declared: its metadata, input and output, then `.declare()`,
 * which alone leads to `.query`, `.mutation` or `.subscription`. So a procedure without a declared cost does not
 * type-check (and `createTRPCRouter` refuses one made around the types).
 */
export interface Undeclared<InputIn = Unset, InputOut = Unset, OutputIn = Unset, OutputOut = Unset> {
  meta(meta: ProcedureMeta): Undeclared<InputIn, InputOut, OutputIn, OutputOut>;
  input<Schema extends z.ZodType>(schema: Schema): Undeclared<z.input<Schema>, z.output<Schema>, OutputIn, OutputOut>;
  output<Schema extends z.ZodType>(schema: Schema): Undeclared<InputIn, InputOut, z.input<Schema>, z.output<Schema>>;
  declare(declaration: Declaration<InputOf<InputOut>>): Pick<Guarded<InputIn, InputOut, OutputIn, OutputOut>, 'query' | 'mutation' | 'subscription'>;
}

/** Units are whole and at least the door's one. */
function wholeUnits(units: number): number {
  if (!Number.isFinite(units)) throw new Error(`a declared cost must be a finite number of units, not ${units}`);
  return Math.max(1, Math.ceil(units));
}

type Resolver = (options: { ctx: Context & { actor: Actor }; input: unknown }) => unknown;

/**
 * The resolver, preceded by its charge: the declared units beyond the door's one, taken from the call's bucket
 * once the input is parsed (tRPC's input step runs before the resolver) and before the resolver's first line.
 * A call rather than a middleware: tRPC copies the call's options at every middleware level (see `guard`).
 */
function chargedFirst(cost: Cost<unknown>, resolver: Resolver): Resolver {
  if (typeof cost === 'number') {
    const more = wholeUnits(cost) - 1;
    if (more === 0) return resolver;
    return async (options) => {
      await options.ctx.charge(more);
      return resolver(options);
    };
  }
  return async (options) => {
    const more = wholeUnits(await cost(options.input, options.ctx)) - 1;
    if (more > 0) await options.ctx.charge(more);
    return resolver(options);
  };
}

/** The builder's steps as this file calls them (the types above are what the routers see). */
type Steps = {
  meta(meta: ProcedureMeta): Steps;
  input(schema: unknown): Steps;
  output(schema: unknown): Steps;
  query(resolver: Resolver): unknown;
  mutation(resolver: Resolver): unknown;
  subscription(resolver: Resolver): unknown;
};

function undeclared(builder: Steps): Undeclared {
  const declare = ({ cost, errors }: Declaration<never>) => {
    const declared = builder.meta({ cost, errors });
    const charged = (resolver: Resolver) => chargedFirst(cost as Cost<unknown>, resolver);
    return {
      query: (resolver: Resolver) => declared.query(charged(resolver)),
      mutation: (resolver: Resolver) => declared.mutation(charged(resolver)),
      subscription: (resolver: Resolver) => declared.subscription(charged(resolver)),
    };
  };
  const steps = {
    meta: (meta: ProcedureMeta) => undeclared(builder.meta(meta)),
    input: (schema: unknown) => undeclared(builder.input(schema)),
    output: (schema: unknown) => undeclared(builder.output(schema)),
    declare,
  };
  return steps as unknown as Undeclared;
}

const guarded = (permission?: Permission) => undeclared(t.procedure.experimental_caller(guard(permission)) as unknown as Steps);

export const protectedProcedure = guarded();

export const procedureNeeding = (permission: Permission) => guarded(permission).meta({ permission });
