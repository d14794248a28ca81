import type { ErrorKind } from '@/shared/errors';

import { IDEMPOTENCY_KEY_HEADER } from './idempotency';
import type { RestRoute } from './routing';

/**
 * The failures the REST door answers for a route by itself, around the procedure, from the same facts
 * chain.ts acts on: the token, the rate limits, the body (or the absence of one), Idempotency-Key and the
 * server's own faults. The document lists them beside the kinds the procedure declares (meta `errors`).
 * Refusals of the HTTP message before any route is chosen (40010, 41700, 43100) belong to no operation.
 */
export function doorErrorKinds(route: RestRoute): ErrorKind[] {
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
