import { TRPCError } from '@trpc/server';
import type { core, z } from 'zod';

import { AppError, type ErrorKind, type ErrorMap } from '@/shared/errors';
import { QUOTED_NAME_MAX_LENGTH, UNKNOWN_FIELDS_NAMED } from '@/shared/limits';
import { unknownFields } from '@/shared/messages';

/** A failure as a client sees it, before a door renders it in its own wire format. */
export type Problem = { kind: ErrorKind; message: string; field?: string };

/** Long enough for a schema's own message naming UNKNOWN_FIELDS_NAMED names, too short for a list of all of them. */
const UNKNOWN_FIELDS_MESSAGE_MAX_LENGTH = (QUOTED_NAME_MAX_LENGTH + 4) * UNKNOWN_FIELDS_NAMED + 200;

export const INTERNAL_ERROR_MESSAGE = 'the server failed to handle this request; it has been logged';

/** Failures tRPC itself raises, before any procedure runs. */
const kindByTrpcCode: Partial<Record<TRPCError['code'], ErrorKind>> = {
  PARSE_ERROR: 'invalidJson',
  // tRPC's own input reading (not JSON, not superjson, a batch that is not an object): the input is the client's.
  BAD_REQUEST: 'invalidJson',
  NOT_FOUND: 'routeNotFound',
  METHOD_NOT_SUPPORTED: 'methodNotAllowed',
  PAYLOAD_TOO_LARGE: 'bodyTooLarge',
  UNSUPPORTED_MEDIA_TYPE: 'unsupportedMediaType',
  UNAUTHORIZED: 'missingToken',
  FORBIDDEN: 'forbidden',
};

function isZodError(error: unknown): error is core.$ZodError {
  return error instanceof Error && error.name === 'ZodError' && Array.isArray((error as core.$ZodError).issues);
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Sorts a validation issue into the error kinds of the catalogue; `input` tells missing from mistyped. */
export function problemFromIssue(issue: core.$ZodIssue, input: unknown): Problem {
  if (issue.code === 'unrecognized_keys') {
    // A schema without words of its own gets zod's, which would list every unknown name (64 KiB of them).
    const message = issue.message.length <= UNKNOWN_FIELDS_MESSAGE_MAX_LENGTH ? issue.message : `${unknownFields(issue.keys)}: the operation does not take them`;
    return { kind: 'unknownField', message, field: issue.keys[0]?.slice(0, QUOTED_NAME_MAX_LENGTH) };
  }
  const field = issue.path.length > 0 ? issue.path.join('.') : undefined;
  if (issue.code === 'invalid_type') {
    const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined;
    return { kind: missing ? 'missingField' : 'wrongType', message: issue.message, field };
  }
  return { kind: 'invalidValue', message: issue.message, field };
}

/**
 * The one translation from anything a procedure can throw to what a client may read. Only AppErrors and
 * validation issues carry their own words out; anything else is an internal failure and says nothing more.
 */
export function problemFromError(error: unknown, input: unknown): Problem {
  const cause = error instanceof TRPCError ? (error.cause ?? error) : error;
  if (cause instanceof AppError) return { kind: cause.kind, message: cause.message, field: cause.field };
  // Only a failed input check is the client's; a failed output check (tRPC reports it as an internal
  // error) means the server produced something it should not have.
  const inputRejected = !(error instanceof TRPCError) || error.code === 'BAD_REQUEST';
  if (inputRejected && isZodError(cause) && cause.issues[0]) return problemFromIssue(cause.issues[0], input);
  const kind = error instanceof TRPCError ? kindByTrpcCode[error.code] : undefined;
  if (!kind || !(error instanceof TRPCError)) return { kind: 'internal', message: INTERNAL_ERROR_MESSAGE };
  // tRPC's own messages are written for clients; one carried over from a library's exception is not,
  // except JSON.parse's, which points at the client's mistake.
  if (error.cause === undefined || error.cause === error) return { kind, message: error.message };
  if (error.cause instanceof SyntaxError) return { kind, message: `the input is not valid JSON: ${error.cause.message}` };
  return { kind, message: 'the input is not valid: it must be JSON as superjson writes it' };
}

/**
 * Refusals made before a procedure's operation runs: the procedure's guard (no token, no permission) and
 * its charge against the rate limit. With a failed input check (a zod issue, or tRPC's own input reading),
 * they are the failures that leave the operation unstarted.
 */
const REFUSED_BEFORE_THE_OPERATION: ReadonlySet<ErrorKind> = new Set(['missingToken', 'invalidToken', 'forbidden', 'tooManyRequests']);

/**
 * Whether a failed call got as far as its operation: only then does an Idempotency-Key keep its answer, as
 * Stripe keeps results "only if an API endpoint started executing" (a request refused by validation, or one
 * that conflicted with another, keeps nothing and is safe to retry). Only AppErrors come from an operation;
 * anything else is the input's check or tRPC's, or a fault, which keeps nothing either.
 */
export function operationStarted(error: unknown): boolean {
  const cause = error instanceof TRPCError ? (error.cause ?? error) : error;
  return cause instanceof AppError && !REFUSED_BEFORE_THE_OPERATION.has(cause.kind);
}

/** The input kinds a validation issue can be sorted into (`problemFromIssue`). */
export const INPUT_ERROR_KINDS: readonly ErrorKind[] = ['missingField', 'wrongType', 'invalidValue', 'unknownField'];

type ObjectSchema = { shape?: Record<string, z.ZodType>; _zod?: { def: { type: string; innerType?: ObjectSchema; catchall?: { _zod: { def: { type: string } } } } } };

/** The object inside an optional, nullable or defaulted input. */
const objectOf = (schema: ObjectSchema): ObjectSchema => (schema.shape === undefined && schema._zod?.def.innerType ? objectOf(schema._zod.def.innerType) : schema);

/** The fields of a procedure's input, each with whether it must be given, and whether others are refused. */
export function inputFields(inputs: readonly z.ZodType[]): { fields: { name: string; required: boolean }[]; strict: boolean } {
  const objects = (inputs as readonly ObjectSchema[]).map(objectOf);
  const fields = objects.flatMap((input) => Object.entries(input.shape ?? {}).map(([name, schema]) => ({ name, required: !schema.safeParse(undefined).success })));
  return { fields, strict: objects.some((input) => input._zod?.def.catchall?._zod.def.type === 'never') };
}

/** What the input check of `fields` (some of a procedure's input's) can answer, sorted as `problemFromIssue` sorts. */
export function inputErrorKinds(fields: { required: boolean }[], strict: boolean): ErrorKind[] {
  if (fields.length === 0 && !strict) return [];
  return [...(fields.some((field) => field.required) ? (['missingField'] as const) : []), 'wrongType', 'invalidValue', ...(strict ? (['unknownField'] as const) : [])];
}

/** Every call can be refused by its guard (no token, a bad one, a spent bucket) and can fail (a fault). */
const EVERY_CALL: readonly ErrorKind[] = ['missingToken', 'invalidToken', 'tooManyRequests', 'internal'];

/** A procedure as its router holds it: what `errorsOf` reads. */
export type DeclaredProcedure = { meta?: { errors?: ErrorMap; permission?: string; file?: string }; inputs: readonly z.ZodType[] };

/**
 * Every failure a procedure can answer where it is called as declared (tRPC, MCP): what every call can meet, 403
 * where it needs a permission, what its input's check answers, and its declared map. The REST door places the
 * input's kinds by where each field came from (http/rest/door-errors.ts) and adds its own.
 */
export function errorsOf(procedure: DeclaredProcedure): ErrorKind[] {
  const { fields, strict } = inputFields(procedure.inputs);
  const input = procedure.inputs.length === 0 ? [] : inputErrorKinds(fields.length === 0 ? [{ required: false }] : fields, strict);
  return [...new Set([...EVERY_CALL, ...(procedure.meta?.permission ? (['forbidden'] as const) : []), ...input, ...declaredErrors(procedure.meta?.errors)])];
}

/** The kinds of a declared map. */
export function declaredErrors(errors: ErrorMap | undefined): ErrorKind[] {
  return Object.keys(errors ?? {}) as ErrorKind[];
}
