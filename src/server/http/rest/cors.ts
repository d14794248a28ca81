import type { IncomingMessage } from 'node:http';

/** What a browser on an allowed origin may read of an answer beside its body. */
const EXPOSED_HEADERS = 'Link, X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, WWW-Authenticate, Idempotent-Replayed';

export type CorsOrigins = '*' | readonly string[] | null;

/**
 * CORS for the REST API: off unless CORS_ALLOWED_ORIGINS lists origins. Tokens travel in a header, never
 * in cookies, so credentials are never allowed cross-origin. Returns the headers the answer carries.
 */
export function corsHeaders(request: IncomingMessage, allowed: CorsOrigins): Record<string, string> {
  const origin = request.headers.origin;
  if (!origin || !allowed) return {};
  const allowedOrigin = allowed === '*' ? '*' : allowed.includes(origin) ? origin : undefined;
  if (!allowedOrigin) return {};
  return {
    'Access-Control-Allow-Origin': allowedOrigin,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    ...(allowedOrigin === '*' ? {} : { Vary: 'Origin' }),
  };
}

/** A preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin: what it may send. */
export function preflightHeaders(request: IncomingMessage, allowed: CorsOrigins, allow: string): Record<string, string> {
  if (request.headers['access-control-request-method'] === undefined || !corsHeaders(request, allowed)['Access-Control-Allow-Origin']) return {};
  return {
    'Access-Control-Allow-Methods': allow,
    'Access-Control-Allow-Headers': 'Authorization, Content-Type, Idempotency-Key',
    'Access-Control-Max-Age': '600',
  };
}
