/**
 * The error-value table: every failure a client can see, with its HTTP status and its stable `error` value.
 * Values are the status times 100 plus a running number, so a person reading a log can tell the status
 * from the value. Never renumber an entry: clients switch on these. README's "Errors" table mirrors this.
 */
export const errorCatalog = {
  invalidJson: { value: 40000, status: 400, meaning: 'The request body is not valid JSON.' },
  bodyNotObject: { value: 40001, status: 400, meaning: 'The request body is JSON but not an object.' },
  missingField: { value: 40002, status: 400, meaning: 'A required field is missing.' },
  wrongType: { value: 40003, status: 400, meaning: 'A field has the wrong JSON type.' },
  invalidValue: {
    value: 40004,
    status: 400,
    meaning: 'A field is out of range or breaks a rule (length, white space, control characters).',
  },
  unknownField: { value: 40005, status: 400, meaning: 'The body has a field that the operation does not take.' },
  plantIdTaken: { value: 40006, status: 400, meaning: 'A plant with this id already exists.' },
  invalidQueryParameter: { value: 40007, status: 400, meaning: 'A query parameter is invalid, or is not UTF-8 once percent-decoded.' },
  invalidPathParameter: { value: 40008, status: 400, meaning: 'A value in the path (a plant id) is not an int64.' },
  malformedRequest: {
    value: 40010,
    status: 400,
    meaning: 'The request is not valid HTTP, or its Host header is not a host name.',
  },
  batchTooLarge: { value: 40011, status: 400, meaning: 'A tRPC batch has more calls than the server takes at once (10).' },
  idempotencyKeyInvalid: {
    value: 40012,
    status: 400,
    meaning: 'The Idempotency-Key header is not 1 to 255 printable ASCII characters, or is sent twice.',
  },
  webhookUrlNotAllowed: {
    value: 40013,
    status: 400,
    meaning: 'The webhook URL is not allowed: not https, or its host is (or resolves to) a private, loopback or link-local address.',
  },
  lastAdmin: { value: 40009, status: 400, meaning: 'The change would leave no admin (admin page and token command).' },
  // 40012–40019 are left to the integrations work (Idempotency-Key, webhooks) so the two lines of work never pick the same value.
  emptyPatch: { value: 40020, status: 400, meaning: 'A PATCH body changes nothing: it must hold name, tag, or both.' },
  ownerFilterForAdmins: { value: 40021, status: 400, meaning: 'The owner filter is for admins; a member sees only their own plants anyway.' },
  missingToken: { value: 40100, status: 401, meaning: 'No bearer token was sent.' },
  invalidToken: { value: 40101, status: 401, meaning: 'The bearer token is unknown, revoked or expired.' },
  forbidden: { value: 40300, status: 403, meaning: 'The caller is signed in but may not do this.' },
  routeNotFound: { value: 40400, status: 404, meaning: 'No such path under /api.' },
  plantNotFound: { value: 40401, status: 404, meaning: 'No plant with this id that the caller has access to.' },
  tokenNotFound: { value: 40402, status: 404, meaning: 'No API token with this id (admin page only).' },
  webhookEndpointNotFound: { value: 40403, status: 404, meaning: 'No webhook endpoint with this id.' },
  webhookDeliveryNotFound: { value: 40404, status: 404, meaning: 'No webhook delivery with this id.' },
  methodNotAllowed: { value: 40500, status: 405, meaning: 'The path exists but not with this method.' },
  bodyTimeout: { value: 40800, status: 408, meaning: 'The request body stalled: nothing arrived for 10 seconds.' },
  bodyTooLarge: { value: 41300, status: 413, meaning: 'The request body is larger than 64 KiB.' },
  unsupportedMediaType: { value: 41500, status: 415, meaning: 'The request body is not sent as application/json, or is sent in a content coding (Content-Encoding).' },
  idempotencyKeyInFlight: {
    value: 40900,
    status: 409,
    meaning: 'A request with this Idempotency-Key is still being carried out; retry later.',
  },
  expectationFailed: { value: 41700, status: 417, meaning: 'The request has an Expect header other than 100-continue.' },
  idempotencyKeyReused: {
    value: 42200,
    status: 422,
    meaning: 'This Idempotency-Key was already used with a different request body.',
  },
  tooManyRequests: {
    value: 42900,
    status: 429,
    meaning: 'Too many requests for this token, or too many failed sign-ins from this address; wait Retry-After seconds.',
  },
  headersTooLarge: { value: 43100, status: 431, meaning: 'The request headers are larger than 16 KiB.' },
  internal: { value: 50000, status: 500, meaning: 'The server failed; the request id in its log tells what.' },
  unavailable: { value: 50300, status: 503, meaning: 'The database cannot be reached (health check).' },
  webhooksNotConfigured: {
    value: 50301,
    status: 503,
    meaning: 'Webhooks are off on this server: WEBHOOKS_SECRET_KEY is not set.',
  },
} as const satisfies Record<string, { value: number; status: number; meaning: string }>;

export type ErrorKind = keyof typeof errorCatalog;

/** A failure with a meaning a client can act on. Thrown by services; each door renders it its own way. */
export class AppError extends Error {
  override readonly name = 'AppError';

  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** The input field the failure is about, so a form can show it in the right place. */
    readonly field?: string,
  ) {
    super(message);
  }

  get status(): number {
    return errorCatalog[this.kind].status;
  }

  get value(): number {
    return errorCatalog[this.kind].value;
  }
}
