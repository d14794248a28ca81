import { STATUS_CODES } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenApiBuilder } from 'trpc-to-openapi';
import { createSchema } from 'zod-openapi';
import type { z } from 'zod';

import { errorCatalog, type ErrorKind } from '@/shared/errors';
import { BODY_LIMIT_BYTES, DELIVERY_TIMEOUT_MS, PREVIOUS_SECRET_GRACE_MS, WEBHOOK_RETRY_BASE_DEFAULT_MS, WEBHOOK_RETRY_WINDOW_FACTOR } from '@/shared/limits';
import { INT64_MAX, INT64_MIN, plantPatchSchema } from '@/shared/plants';
import { TEST_EVENT_MESSAGE, TEST_EVENT_TYPE, WEBHOOK_EVENTS, type WebhookEventType } from '@/shared/webhooks';

import { MESSAGE_MAX_LENGTH } from '../reply';

import { restErrorKinds } from './door-errors';
import { restOperations } from './routing';

export const API_VERSION = '1.3.0';

type Json = Record<string, unknown>;
type SchemaObject = NonNullable<NonNullable<ReturnType<OpenApiBuilder['getSpec']>['components']>['schemas']>[string];
type ResponseObject = { description: string; headers?: Json; content?: Record<string, { schema: Json }> };
type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: { in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, ResponseObject>;
};

const INT32_MAX = 2 ** 31 - 1;
const int32 = (minimum: number, maximum = INT32_MAX) => ({ type: 'integer' as const, format: 'int32', minimum, maximum });

const errorSchema: SchemaObject = {
  type: 'object',
  description: 'Every failure of /api answers with this body and nothing else.',
  required: ['error', 'message'],
  additionalProperties: false,
  properties: {
    error: {
      // The status times 100 plus a running number: 40000 to 59999.
      ...int32(40000, 59999),
      description: 'A stable number per condition; the table in the info lists them, and each operation the ones it can return.',
    },
    message: { type: 'string', maxLength: MESSAGE_MAX_LENGTH, description: 'What went wrong, in a sentence a person can act on.' },
  },
};

/** The body of an import's part: text, not an object of fields. */
const importPartSchema: SchemaObject = {
  type: 'string',
  maxLength: BODY_LIMIT_BYTES,
  description: "A part of a CSV file's text, UTF-8, at most 64 KiB and 2,000 rows, cut anywhere between characters",
};

const errorTable = Object.values(errorCatalog)
  .toSorted((a, b) => a.value - b.value)
  .map(({ value, status, meaning }) => `| ${value} | ${status} | ${meaning} |`)
  .join('\n');

const DESCRIPTION = `A store of plants. Every call needs \`Authorization: Bearer <token>\`.

Ids of plants are int64, written in requests and answers as JSON numbers with every digit (9007199254740993 stays itself). A JSON parser that reads numbers as doubles rounds those beyond ±2^53: read them as bigint (docs/api.md in the repository, "Generated clients", has set-ups for openapi-fetch, hey-api and orval that do).

Every failure is \`{"error": <int32>, "message": <string>}\`; each operation lists, per status, the \`error\` values it can answer. A request the server refuses before it reaches any operation can also get 40010, 40800, 41700 or 43100, and a path or method not in this document 40400 or 40500.

| error | status | meaning |
|---|---|---|
${errorTable}`;

/**
 * The package is private and names no licence (package.json); the document says so rather than leave the field
 * out. No SPDX licence fits a proprietary API: SPDX's own form for a licence it does not list is `LicenseRef-…`.
 */
const LICENSE = { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };

const TAGS = [
  { name: 'plants', description: 'The catalogue: create, list (by id, in pages, with filters), rename or re-tag, delete. Members see and change their own plants, admins all.' },
  { name: 'webhooks', description: `Admins only: endpoints that receive ${WEBHOOK_EVENTS.map((type) => `\`${type}\``).join(' and ')} events (see \`webhooks\`), and their delivery logs.` },
];

/** Headers an answer with this status carries, exactly as the guards and the chain send them. */
const HEADERS_BY_STATUS: Record<string, Json> = {
  401: {
    'WWW-Authenticate': {
      description: 'The challenge (RFC 6750), with `error="invalid_token"` when a token was sent.',
      required: true,
      schema: { type: 'string', enum: ['Bearer realm="plants"', 'Bearer realm="plants", error="invalid_token"'] },
    },
  },
  409: { 'Retry-After': { description: 'Seconds to wait before retrying.', required: true, schema: int32(1) } },
  // The rate limiter's refusal (http/guards/auth.ts); no other answer carries them.
  429: {
    'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: int32(1) },
    'RateLimit-Limit': { description: 'The burst the limit allows.', required: true, schema: int32(1) },
    'RateLimit-Remaining': { description: 'Requests left now: none.', required: true, schema: int32(0, 0) },
    'RateLimit-Reset': { description: 'Seconds until a request is taken again (as Retry-After).', required: true, schema: int32(1) },
    'RateLimit-Policy': {
      description: '`<burst>;w=<seconds the bucket takes to refill>`.',
      required: true,
      schema: { type: 'string', pattern: '^[0-9]+;w=[0-9]+$', maxLength: 30 },
    },
  },
};

/** `error` is one of `kinds`' values: the Error component narrowed to what this answer can carry. */
function errorContent(kinds: ErrorKind[]) {
  const values = kinds.map((kind) => errorCatalog[kind].value).sort((a, b) => a - b);
  const narrowed = { type: 'object', properties: { error: { ...int32(values[0]!, values.at(-1)!), enum: values } } };
  return { 'application/json': { schema: { allOf: [{ $ref: '#/components/schemas/Error' }, narrowed] } } };
}

function describeFailure(status: number, kinds: ErrorKind[]): string {
  const values = kinds.map((kind) => `- \`${errorCatalog[kind].value}\`: ${errorCatalog[kind].meaning}`);
  return `${STATUS_CODES[status]}. \`error\` is one of:\n\n${values.join('\n')}`;
}

/** Components for the input schemas that carry an id (`.meta({ id })`), such as NewPlant, as clients send them. */
function inputComponents(router: AnyTRPCRouter): Record<string, Json> {
  const components: Record<string, Json> = {};
  for (const procedure of Object.values(router._def.procedures as Record<string, { _def: { inputs: z.ZodType[] } }>)) {
    for (const input of procedure._def.inputs) {
      if (typeof input.meta()?.id === 'string') Object.assign(components, createSchema(input, { io: 'input' }).components);
    }
  }
  return components;
}

const withoutDescription = ({ description, ...schema }: Json) => JSON.stringify(schema);

const INT64_NOTE = 'An int64, written as a JSON number with every digit: read it without rounding (a bigint beyond ±2^53).';

/**
 * Every int64 in the document gets its range, written exactly (bigint: the document is served with
 * lossless JSON), and a word on reading it, which generators copy into the client's doc comments.
 */
function markInt64(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(markInt64);
  if (node === null || typeof node !== 'object') return;
  const schema = node as Json;
  if (schema.type === 'integer' && schema.format === 'int64') {
    schema.minimum ??= INT64_MIN;
    schema.maximum ??= INT64_MAX;
    schema.description = typeof schema.description === 'string' ? `${schema.description.replace(/\.?$/, '.')} ${INT64_NOTE}` : INT64_NOTE;
  }
  for (const value of Object.values(schema)) markInt64(value);
}

/**
 * The document trpc-to-openapi generates from the router, completed where the REST edge answers
 * differently from the library: every failure is an `Error` ({error, message}) whose `error` values are
 * the ones this operation can answer (its procedure's declared errors, its input's and the door's own,
 * from the error catalogue), a void procedure answers 204, a conditional one 304, 401, 409 and 429 carry their headers.
 */
export function buildOpenApiDocument(router: AnyTRPCRouter) {
  const failures = new Map(
    restOperations(router).map(({ route, procedure }) => [`${route.method.toLowerCase()} ${route.template}`, restErrorKinds(route, procedure)]),
  );
  const files = new Map(restOperations(router).flatMap(({ route }) => (route.file ? [[`${route.method.toLowerCase()} ${route.template}`, route.file.split(';')[0]!] as const] : [])));
  const conditional = new Set(restOperations(router).flatMap(({ route }) => (route.conditional ? [`${route.method.toLowerCase()} ${route.template}`] : [])));
  const document = generateOpenApiDocument(router, {
    title: 'Plant Store',
    version: API_VERSION,
    description: DESCRIPTION,
    baseUrl: '/api',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token such as `pst_…` from `npm run token -- create`.' } },
  });
  Object.assign(document.info, { contact: { name: 'Plant Store' }, license: LICENSE });
  // The API is served beside this document for the public (OWASP's inventory rule asks to say so).
  document.servers = (document.servers ?? []).map((server) => ({ ...server, 'x-internal': false }));
  document.tags = TAGS;
  const schemas = (document.components!.schemas ??= {});
  // The library registers its own error shape ({message, code, issues}) per code; this API never sends it.
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  Object.assign(schemas, inputComponents(router), createSchema(plantPatchSchema, { io: 'input' }).components, { Error: errorSchema, PlantImportPart: importPartSchema });

  // trpc-to-openapi rebuilds a body schema without its path parameters, which drops the component id;
  // where the rebuilt schema is a named component after all, refer to the component.
  const componentByShape = new Map(Object.entries(schemas).map(([name, schema]) => [withoutDescription(schema as Json), name]));

  for (const [path, pathItem] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(pathItem as Record<string, Operation>)) {
      const body = operation.requestBody?.content['application/json'];
      const component = body && componentByShape.get(withoutDescription(body.schema));
      if (body && component) body.schema = { $ref: `#/components/schemas/${component}` };
      // PATCH takes a JSON merge patch (RFC 7396) under its own media type, or as plain JSON.
      if (body && operation.operationId === 'updatePlant') {
        body.schema = { $ref: '#/components/schemas/PlantPatch' };
        operation.requestBody!.content = { 'application/merge-patch+json': { schema: body.schema }, 'application/json': { schema: body.schema } };
      }
      // A text/csv body (an import's part) is the file's text itself, not an object of fields.
      const csv = operation.requestBody?.content['text/csv'];
      if (csv) csv.schema = { $ref: '#/components/schemas/PlantImportPart' };
      // A path parameter is always required (OpenAPI 3.1, 4.8.12.1); zod-openapi cannot tell that from a
      // schema that also accepts the tRPC door's typed value.
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'path') parameter.required = true;
      const responses = operation.responses;
      // A file (the CSV export) is its media type's text, not JSON.
      const file = files.get(`${method} ${path}`);
      if (file) responses['200']!.content = { [file]: { schema: { type: 'string' } } };
      const success = responses['200'];
      const successJson = success?.content?.['application/json'];
      // A procedure with no result answers 204; an answer in another media type (the CSV export) is a 200.
      if (success && (!success.content || successJson) && Object.keys(successJson?.schema ?? {}).length === 0) {
        delete responses['200'];
        responses['204'] = { description: success.description, headers: success.headers };
      }
      // A conditional GET (http/rest/conditional.ts) answers an If-None-Match that still holds with a 304.
      if (conditional.has(`${method} ${path}`)) {
        responses['304'] = {
          description: 'Not Modified: nothing the caller can see changed since the answer whose `ETag` was sent in `If-None-Match`; no body',
          headers: { ETag: { description: 'The same ETag', required: true, schema: { type: 'string', maxLength: 29, pattern: '^"[\\w-]{27}"$' } } },
        };
      }
      // The failures come from the catalogue, by status; the library's guesses are dropped.
      for (const status of Object.keys(responses)) if (Number(status) >= 400) delete responses[status];
      const kinds = failures.get(`${method} ${path}`) ?? [];
      for (const status of [...new Set(kinds.map((kind) => errorCatalog[kind].status))].sort((a, b) => a - b)) {
        const ofStatus = kinds.filter((kind) => errorCatalog[kind].status === status).sort((a, b) => errorCatalog[a].value - errorCatalog[b].value);
        responses[status] = {
          description: describeFailure(status, ofStatus),
          ...(HEADERS_BY_STATUS[status] && { headers: HEADERS_BY_STATUS[status] }),
          content: errorContent(ofStatus),
        };
      }
    }
  }
  Object.assign(schemas, webhookEventSchemas);
  const complete = Object.assign(document, { webhooks: webhookOperations() });
  markInt64(complete);
  return complete;
}

/**
 * The events the server POSTs to registered endpoints (OpenAPI 3.1's `webhooks`), one per event type an endpoint
 * can subscribe to (`WEBHOOK_EVENTS`) and the test event an admin asks for, with the Standard Webhooks headers
 * and the delivery rules read from the limits. Words per type, typed by the list: a new event type does not
 * type-check until it has them.
 */
const EVENT_WORDS: Record<WebhookEventType | typeof TEST_EVENT_TYPE, { summary: string; description: string }> = {
  'plant.created': { summary: 'A plant was created', description: "A plant was created (the original document's newPlant)." },
  'plant.deleted': { summary: 'A plant was deleted', description: 'A plant was deleted; data is the plant as it was.' },
  'webhook.test': { summary: 'A test event an admin asked for', description: 'Sent to one endpoint when an admin asks for a test.' },
};

const isoTime = { type: 'string', format: 'date-time', maxLength: 30 };

/** `plant.created` → `PlantCreatedEvent` (the component), `plantCreatedEvent` (the operation). */
const eventName = (type: string) => `${type.replace(/(?:^|\.)(\w)/g, (_, letter: string) => letter.toUpperCase())}Event`;

const eventData = (type: WebhookEventType | typeof TEST_EVENT_TYPE): Json =>
  type === TEST_EVENT_TYPE
    ? { type: 'object', required: ['endpointId', 'message'], properties: { endpointId: int32(1), message: { type: 'string', const: TEST_EVENT_MESSAGE } } }
    : { $ref: '#/components/schemas/Plant' };

const EVENT_TYPES = [...WEBHOOK_EVENTS, TEST_EVENT_TYPE] as const;

const webhookEventSchemas: Record<string, SchemaObject> = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    eventName(type),
    {
      type: 'object',
      description: EVENT_WORDS[type].description,
      required: ['type', 'timestamp', 'data'],
      additionalProperties: false,
      properties: { type: { type: 'string', const: type }, timestamp: { ...isoTime, description: 'When the change was committed' }, data: eventData(type) },
    } as SchemaObject,
  ]),
);

const hours = (ms: number) => `${ms / 3_600_000} hours`;
const DELIVERY_RULES = `POSTed to every enabled endpoint subscribed to the event, at least once, in order per endpoint. A 2xx answer within ${DELIVERY_TIMEOUT_MS / 1000} s is a delivery; anything else (redirects included) is retried with exponential backoff for at least ${hours(WEBHOOK_RETRY_BASE_DEFAULT_MS * WEBHOOK_RETRY_WINDOW_FACTOR)} (at the default \`WEBHOOKS_RETRY_BASE_MS\`). The server is the caller, so no bearer token is sent (\`security: []\`): check \`webhook-signature\` instead.`;

function webhookOperations(): Json {
  const header = (name: string, description: string, schema: Json) => ({ in: 'header', name, required: true, description, schema });
  const signature = 'v1,[A-Za-z0-9+/]{43}=';
  const parameters = [
    header('webhook-id', 'The event id, `msg_` and 32 hex digits: the same for every endpoint and every attempt; drop repeats by it.', {
      type: 'string',
      pattern: '^msg_[0-9a-f]{32}$',
      maxLength: 36,
    }),
    header('webhook-timestamp', 'Unix seconds at the attempt; reject messages more than 5 minutes off.', { type: 'string', pattern: '^[0-9]{1,15}$', maxLength: 15 }),
    header(
      'webhook-signature',
      `\`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the secret's bytes>\`; for ${hours(PREVIOUS_SECRET_GRACE_MS)} after a secret rotation, two signatures separated by a space.`,
      { type: 'string', pattern: `^${signature}( ${signature})?$`, maxLength: 95 },
    ),
  ];
  const operation = (type: (typeof EVENT_TYPES)[number]) => ({
    post: {
      operationId: eventName(type).replace(/^\w/, (letter) => letter.toLowerCase()),
      summary: EVENT_WORDS[type].summary,
      description: DELIVERY_RULES,
      parameters,
      // The server is the caller here: a receiver is sent no bearer token, and checks webhook-signature instead.
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventName(type)}` } } } },
      responses: {
        '2XX': { description: 'Received: the delivery is done' },
        default: { description: 'Not received: retried later' },
      },
    },
  });
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, operation(type)]));
}
