import {
  BATCH_MAX_CALLS,
  BODY_IDLE_TIMEOUT_MS,
  BODY_LIMIT_BYTES,
  BODY_TOTAL_TIMEOUT_MS,
  HEADERS_MAX_BYTES,
  IMPORT_MAX_BYTES,
  IMPORT_MAX_ROWS,
  IMPORT_PART_MAX_ROWS,
  IMPORT_RECORD_MAX_LENGTH,
  JSON_MAX_DEPTH,
  kib,
  REQUEST_TIMEOUT_MS,
} from './limits';

const seconds = (ms: number) => `${ms / 1000} seconds`;
const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/**
 * The error-value table: every failure a client can see, with its HTTP status and its stable `error` value.
 * Values are the status times 100 plus a running number, so a person reading a log can tell the status
 * from the value. Never renumber an entry: clients switch on these. `meaning` is Markdown: the OpenAPI
 * document lists it (in its info table, and per operation for the values that operation can return), and
 * docs/api.md's "Errors" table is held to it by a unit test (errors.test.ts).
 */
export const errorCatalog = {
  invalidJson: { value: 40000, status: 400, meaning: 'The request body is not valid JSON (also: empty, not UTF-8, a key given twice).' },
  bodyNotObject: { value: 40001, status: 400, meaning: 'The request body is JSON but not an object.' },
  missingField: { value: 40002, status: 400, meaning: 'A required field is missing.' },
  wrongType: { value: 40003, status: 400, meaning: 'A field has the wrong JSON type (`"7"` or `7.5` for an id, `null` for a tag).' },
  invalidValue: {
    value: 40004,
    status: 400,
    meaning:
      'A field is out of range or breaks a rule (length, only white space or invisible characters, control characters, text that is not well-formed Unicode).',
  },
  unknownField: {
    value: 40005,
    status: 400,
    meaning: 'The body has a field that the operation does not take (also `id` in a PATCH body, and any field where an operation takes no body).',
  },
  plantIdTaken: { value: 40006, status: 400, meaning: 'A plant with this id already exists.' },
  invalidQueryParameter: {
    value: 40007,
    status: 400,
    meaning:
      'A query parameter is not valid, is not UTF-8 once percent-decoded, or is given twice (the message names it): `limit`, `after`, `tag`, `q` or `owner` of the plant list; `limit`, `before` or `status` of a delivery log.',
  },
  invalidPathParameter: {
    value: 40008,
    status: 400,
    meaning: 'A value in the path is not valid: a plant id that is not an int64, a webhook endpoint or delivery id that is not a positive int32.',
  },
  lastAdmin: {
    value: 40009,
    status: 400,
    meaning:
      'The change would leave no admin with a working token: revoking the last working admin token, or making the last admin who has one a member (admin page, token command).',
  },
  malformedRequest: {
    value: 40010,
    status: 400,
    meaning:
      'The request is not valid HTTP: a request target that is not a path, an absolute http(s) URL or `OPTIONS *`; no `Host`, two, or one that is not a host name; two `Content-Type` or `Content-Length` fields. The connection closes after the answer.',
  },
  batchTooLarge: { value: 40011, status: 400, meaning: `A tRPC batch has more calls than the server takes at once (${BATCH_MAX_CALLS}).` },
  idempotencyKeyInvalid: {
    value: 40012,
    status: 400,
    meaning: 'The `Idempotency-Key` header is not 1 to 255 printable ASCII characters, or is sent twice.',
  },
  webhookUrlNotAllowed: {
    value: 40013,
    status: 400,
    meaning:
      'The webhook URL is not allowed: not https, or its host is (or resolves to) a private, loopback or link-local address (see Webhooks).',
  },
  invalidCsv: {
    value: 40014,
    status: 400,
    meaning: `An import's CSV cannot be read as plants. A part that is not UTF-8 text or holds more than ${IMPORT_PART_MAX_ROWS.toLocaleString('en-US')} rows is refused alone (send it again as UTF-8, or in smaller parts); the file is refused for good when its first line does not name the columns \`id\` and \`name\` (and only \`tag\`, \`owner\` and \`created\` besides), a record is longer than ${IMPORT_RECORD_MAX_LENGTH.toLocaleString('en-US')} characters (a quote never closed), or it has more than ${IMPORT_MAX_ROWS.toLocaleString('en-US')} rows or ${mib(IMPORT_MAX_BYTES)}.`,
  },
  importState: {
    value: 40015,
    status: 400,
    meaning: 'The import cannot do this now: a part out of order (the message names the part expected) or after the upload ended, or an apply before the upload ended or while another import of yours is being applied.',
  },
  // 40016–40019 are unassigned.
  emptyPatch: { value: 40020, status: 400, meaning: 'A PATCH body changes nothing: it must hold at least one field of the plant.' },
  ownerFilterForAdmins: { value: 40021, status: 400, meaning: 'The `owner` filter is for admins; a member sees only their own plants anyway.' },
  jsonTooDeep: {
    value: 40022,
    status: 400,
    meaning: `The request body (or a tRPC input) nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep.`,
  },
  missingToken: { value: 40100, status: 401, meaning: 'No bearer token was sent. `WWW-Authenticate: Bearer realm="plants"`.' },
  invalidToken: {
    value: 40101,
    status: 401,
    meaning: 'The bearer token is unknown, revoked or expired. `WWW-Authenticate: Bearer realm="plants", error="invalid_token"`.',
  },
  forbidden: { value: 40300, status: 403, meaning: 'Signed in but not allowed: the webhook operations and the admin page\'s token procedures are for admins; on the MCP door also a page from an origin it does not trust.' },
  routeNotFound: { value: 40400, status: 404, meaning: 'No such path under `/api`.' },
  plantNotFound: { value: 40401, status: 404, meaning: 'No plant with this id that the caller has access to.' },
  tokenNotFound: { value: 40402, status: 404, meaning: 'No API token with this id (admin page).' },
  webhookEndpointNotFound: { value: 40403, status: 404, meaning: 'No webhook endpoint with this id.' },
  webhookDeliveryNotFound: { value: 40404, status: 404, meaning: 'No webhook delivery with this id.' },
  importNotFound: { value: 40405, status: 404, meaning: 'No import with this id that you started (an import is kept 24 hours after its last change).' },
  methodNotAllowed: { value: 40500, status: 405, meaning: 'The path exists but not with this method; `Allow` lists the methods.' },
  bodyTimeout: {
    value: 40800,
    status: 408,
    meaning:
      `The request body stalled (nothing arrived for ${seconds(BODY_IDLE_TIMEOUT_MS)}) or trickled (not all there ${seconds(BODY_TOTAL_TIMEOUT_MS)} after it was awaited), or the whole request took over ${seconds(REQUEST_TIMEOUT_MS)}.`,
  },
  idempotencyKeyInFlight: {
    value: 40900,
    status: 409,
    meaning: 'A request with this `Idempotency-Key` is still being carried out; retry after `Retry-After`.',
  },
  bodyTooLarge: { value: 41300, status: 413, meaning: `The request body is larger than ${kib(BODY_LIMIT_BYTES)}.` },
  unsupportedMediaType: {
    value: 41500,
    status: 415,
    meaning:
      'The request body is not sent as `application/json` (a PATCH may also use `application/merge-patch+json`; an import\'s part is `text/csv`), or its charset is not UTF-8, or it is sent in a content coding (`Content-Encoding`; `Accept-Encoding: identity` says so).',
  },
  expectationFailed: { value: 41700, status: 417, meaning: 'The request has an `Expect` header other than `100-continue`.' },
  idempotencyKeyReused: { value: 42200, status: 422, meaning: 'This `Idempotency-Key` was already used with a different body.' },
  tooManyRequests: {
    value: 42900,
    status: 429,
    meaning: 'Too many requests for this token, or too many invalid tokens from this address; wait `Retry-After` seconds.',
  },
  headersTooLarge: { value: 43100, status: 431, meaning: `The request headers are larger than ${kib(HEADERS_MAX_BYTES)}.` },
  internal: {
    value: 50000,
    status: 500,
    meaning:
      'The server failed. The message carries a request id, also in the `X-Request-Id` header, under which the cause is logged. No stack, SQL or library detail reaches a client.',
  },
  unavailable: { value: 50300, status: 503, meaning: 'The database cannot be reached (`/api/health` only).' },
  webhooksNotConfigured: { value: 50301, status: 503, meaning: 'Webhooks are off on this server: `WEBHOOKS_SECRET_KEY` is not set.' },
  draining: {
    value: 50302,
    status: 503,
    meaning: 'This instance is shutting down (`/api/health` only): it still answers requests for `SHUTDOWN_DRAIN_MS`, while a load balancer sends new ones elsewhere.',
  },
} as const satisfies Record<string, { value: number; status: number; meaning: string }>;

export type ErrorKind = keyof typeof errorCatalog;

/**
 * The failures a procedure answers beyond those every call can meet (the guard's 401, 403 and 429, a fault's
 * 500) and those its input's check answers (40002–40005, read from its schema): each kind with `true`, or
 * with a sentence on when this procedure answers it, which the MCP tool's description then carries. Declared
 * once per procedure, beside its cost (`.declare({ cost, errors })`); the OpenAPI document, the MCP tool's
 * description and the tests' oracle are read from it (server/problems.ts, `errorsOf`).
 */
export type ErrorMap = { readonly [Kind in ErrorKind]?: true | string };

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
