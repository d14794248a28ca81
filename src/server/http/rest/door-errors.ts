import { type DeclaredProcedure, declaredErrors, errorsOf, INPUT_ERROR_KINDS, inputErrorKinds, inputFields, type Problem } from '@/server/problems';
import type { ErrorKind } from '@/shared/errors';

import { IDEMPOTENCY_KEY_HEADER } from './idempotency';
import type { RestRoute } from './routing';

/**
 * Where a field of the input came from decides the error value of an input problem on REST: a path value is
 * 40008, a query value 40007, the text of a `text/csv` body 40014, a JSON body's field 40002–40005 as the
 * shared translation sorts it. The answers (`placeProblem`) and the document (`restErrorKinds`) both place by
 * this one rule.
 */
function placeField(route: RestRoute, field: string): ErrorKind | undefined {
  if (route.pathParameters.includes(field)) return 'invalidPathParameter';
  if (field === route.textBody) return 'invalidCsv';
  // Without a body, every other field came from the query.
  if (route.method === 'GET' || route.method === 'DELETE') return 'invalidQueryParameter';
  return undefined;
}

/** A procedure's input problem as the REST door answers it (see `placeField`). */
export function placeProblem(problem: Problem, route: RestRoute): Problem {
  if (!INPUT_ERROR_KINDS.includes(problem.kind) || !problem.field) return problem;
  const placed = placeField(route, problem.field.split('.')[0]!);
  return placed ? { ...problem, kind: placed } : problem;
}

/**
 * The failures the REST door answers for a route by itself, around the procedure, from the same facts
 * chain.ts acts on: the token, the rate limits, the body (or the absence of one), Idempotency-Key and the
 * server's own faults. Refusals of the HTTP message before any route is chosen (40010, 41700, 43100) belong
 * to no operation.
 */
function doorErrorKinds(route: RestRoute): ErrorKind[] {
  const kinds: ErrorKind[] = [];
  if (route.protect) kinds.push('missingToken', 'invalidToken');
  // Every request is authenticated before its route is served, so an invalid token drains its address's bucket anywhere.
  kinds.push('tooManyRequests');
  if (route.requestHeaders.includes(IDEMPOTENCY_KEY_HEADER)) kinds.push('idempotencyKeyInvalid', 'idempotencyKeyInFlight', 'idempotencyKeyReused');
  if (route.textBody) {
    // A text/csv body is text, not JSON: read whole as UTF-8, or refused.
    kinds.push('unsupportedMediaType', 'bodyTooLarge', 'bodyTimeout', 'invalidCsv');
  } else if (route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH') {
    kinds.push('unsupportedMediaType', 'bodyTooLarge', 'bodyTimeout', 'invalidJson', 'jsonTooDeep', 'bodyNotObject');
    // A member of a body where none is declared, or a path value sent in the body too.
    if (!route.takesBody || route.pathParameters.length > 0) kinds.push('unknownField');
  }
  kinds.push('internal');
  return kinds;
}

/**
 * Every failure a REST operation can answer: the door's own, the procedure's input kinds placed by where each
 * field came from, and the rest of what the procedure can answer (`errorsOf`: its guard and its declared map).
 */
export function restErrorKinds(route: RestRoute, procedure: DeclaredProcedure): ErrorKind[] {
  const { fields, strict } = inputFields(procedure.inputs);
  const bodyFields = fields.filter((field) => placeField(route, field.name) === undefined);
  const placed = fields.flatMap((field) => placeField(route, field.name) ?? []);
  const body = route.takesBody && !route.textBody ? inputErrorKinds(bodyFields, strict) : [];
  const procedureKinds = errorsOf(procedure).filter((kind) => !INPUT_ERROR_KINDS.includes(kind) || declaredErrors(procedure.meta?.errors).includes(kind));
  return [...new Set([...doorErrorKinds(route), ...placed, ...body, ...procedureKinds])];
}
