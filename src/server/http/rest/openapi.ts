import type { AnyTRPCRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenApiBuilder, type OpenApiMeta } from 'trpc-to-openapi';
import { createSchema } from 'zod-openapi';
import type { z } from 'zod';

import { errorCatalog } from '@/shared/errors';

import { EXPORT_PATH, exportOperationDocument } from './export';
import { plantPatchSchema } from '@/shared/plants';

export const API_VERSION = '1.1.0';

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

const errorSchema: SchemaObject = {
  type: 'object',
  description: 'Every failure of /api answers with this body and nothing else.',
  required: ['error', 'message'],
  additionalProperties: false,
  properties: {
    error: { type: 'integer', format: 'int32', description: 'A stable number per condition; see the table in the info.' },
    message: { type: 'string', description: 'What went wrong, in a sentence a person can act on.' },
  },
};

const errorTable = Object.values(errorCatalog)
  .map(({ value, status, meaning }) => `| ${value} | ${status} | ${meaning} |`)
  .join('\n');

function describeStatus(status: number, description: string): string {
  const values = Object.values(errorCatalog)
    .filter((entry) => entry.status === status)
    .map((entry) => `${entry.value}: ${entry.meaning}`);
  return [description, ...values].join('\n\n');
}

/**
 * The document trpc-to-openapi generates from the router, completed where the REST edge answers
 * differently from the library: every failure is an `Error` ({error, message}), a void procedure answers
 * 204, 401 carries its challenge, and every operation may fail with 500.
 */
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

/**
 * Each operation's own words for its failures, from the procedure's `errorResponses` meta. The library
 * caches one response object per error code, so in its document every 400 reads like the first one.
 */
function failureDescriptions(router: AnyTRPCRouter): Map<string, Record<string, string>> {
  const descriptions = new Map<string, Record<string, string>>();
  for (const [path, procedure] of Object.entries(router._def.procedures as Record<string, { _def: { meta?: OpenApiMeta } }>)) {
    const openapi = procedure._def.meta?.openapi;
    if (openapi?.errorResponses && !Array.isArray(openapi.errorResponses)) {
      descriptions.set(openapi.operationId ?? path.replace(/\./g, '-'), openapi.errorResponses);
    }
  }
  return descriptions;
}

export function buildOpenApiDocument(router: AnyTRPCRouter) {
  const ownWords = failureDescriptions(router);
  const document = generateOpenApiDocument(router, {
    title: 'Plant Store',
    version: API_VERSION,
    description: `A store of plants. Every call needs \`Authorization: Bearer <token>\`.\n\n| error | status | meaning |\n|---|---|---|\n${errorTable}`,
    baseUrl: '/api',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token such as `pst_…` from `npm run token -- create`.' } },
  });
  const schemas = (document.components!.schemas ??= {});
  // The library registers its own error shape ({message, code, issues}) per code; this API never sends it.
  for (const name of Object.keys(schemas)) if (name.startsWith('error.')) delete schemas[name];
  Object.assign(schemas, inputComponents(router), createSchema(plantPatchSchema, { io: 'input' }).components, { Error: errorSchema });
  const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  // The CSV export is served beside the procedures (http/rest/export.ts); its failures are completed below with the rest.
  document.paths = { ...document.paths, [EXPORT_PATH.slice('/api'.length)]: structuredClone(exportOperationDocument) as NonNullable<typeof document.paths>[string] };

  // trpc-to-openapi rebuilds a body schema without its path parameters, which drops the component id;
  // where the rebuilt schema is a named component after all, refer to the component.
  const componentByShape = new Map(Object.entries(schemas).map(([name, schema]) => [withoutDescription(schema as Json), name]));

  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const body = operation.requestBody?.content['application/json'];
      const component = body && componentByShape.get(withoutDescription(body.schema));
      if (body && component) body.schema = { $ref: `#/components/schemas/${component}` };
      // PATCH takes a JSON merge patch (RFC 7396) under its own media type, or as plain JSON.
      if (body && operation.operationId === 'updatePlant') {
        body.schema = { $ref: '#/components/schemas/PlantPatch' };
        operation.requestBody!.content = { 'application/merge-patch+json': { schema: body.schema }, 'application/json': { schema: body.schema } };
      }
      // A path parameter is always required (OpenAPI 3.1, 4.8.12.1); zod-openapi cannot tell that from a
      // schema that also accepts the tRPC door's typed value.
      for (const parameter of operation.parameters ?? []) if (parameter.in === 'path') parameter.required = true;
      const responses = operation.responses;
      const success = responses['200'];
      const successJson = success?.content?.['application/json'];
      // A procedure with no result answers 204; an answer in another media type (the CSV export) is a 200.
      if (success && (!success.content || successJson) && Object.keys(successJson?.schema ?? {}).length === 0) {
        delete responses['200'];
        responses['204'] = { description: success.description, headers: success.headers };
      }
      if (operation.security) responses['429'] ??= { description: 'Too many requests; wait Retry-After seconds' };
      responses['500'] ??= { description: 'The server failed' };
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        responses[status] = {
          description: describeStatus(Number(status), ownWords.get(operation.operationId ?? '')?.[status] ?? response.description),
          ...(status === '401' && {
            headers: {
              'WWW-Authenticate': {
                description: 'The challenge: `Bearer realm="plants"`, with `error="invalid_token"` when a token was sent.',
                schema: { type: 'string' },
              },
            },
          }),
          ...(status === '409' && {
            headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
          }),
          ...(status === '429' && {
            headers: {
              'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
              'RateLimit-Limit': { description: 'The burst the limit allows.', schema: { type: 'integer' } },
            },
          }),
          content: errorContent,
        };
      }
    }
  }
  Object.assign(schemas, webhookEventSchemas);
  return Object.assign(document, { webhooks: webhookOperations() });
}

/**
 * The events the server POSTs to registered endpoints (OpenAPI 3.1's `webhooks`): the Plant Store
 * document's `newPlant`, as `plant.created`, and its counterpart `plant.deleted`, with the Standard
 * Webhooks headers. `webhook.test` is what "send test event" sends.
 */
const eventEnvelope = (type: string, data: Json, description: string): Json => ({
  type: 'object',
  description,
  required: ['type', 'timestamp', 'data'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', const: type },
    timestamp: { type: 'string', format: 'date-time', description: 'When the change was committed' },
    data,
  },
});

const webhookEventSchemas: Record<string, SchemaObject> = {
  PlantCreatedEvent: eventEnvelope('plant.created', { $ref: '#/components/schemas/Plant' }, 'A plant was created (the original document\'s newPlant).') as SchemaObject,
  PlantDeletedEvent: eventEnvelope('plant.deleted', { $ref: '#/components/schemas/Plant' }, 'A plant was deleted; data is the plant as it was.') as SchemaObject,
  WebhookTestEvent: eventEnvelope(
    'webhook.test',
    {
      type: 'object',
      required: ['endpointId', 'message'],
      properties: { endpointId: { type: 'integer', format: 'int32' }, message: { type: 'string' } },
    },
    'Sent to one endpoint when an admin asks for a test.',
  ) as SchemaObject,
};

function webhookOperations(): Json {
  const header = (name: string, description: string) => ({ in: 'header', name, required: true, description, schema: { type: 'string' } });
  const parameters = [
    header('webhook-id', 'The event id (`msg_…`): the same for every endpoint and every attempt; drop repeats by it.'),
    header('webhook-timestamp', 'Unix seconds at the attempt; reject messages more than 5 minutes off.'),
    header(
      'webhook-signature',
      '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the secret\'s bytes>`; during a day after a secret rotation, two signatures separated by a space.',
    ),
  ];
  const operation = (component: string, summary: string) => ({
    post: {
      summary,
      description:
        'POSTed to every enabled endpoint subscribed to the event, at least once, in order per endpoint. A 2xx answer within 10 s is a delivery; anything else (redirects included) is retried with exponential backoff for at least 24 hours.',
      parameters,
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${component}` } } } },
      responses: {
        '2XX': { description: 'Received: the delivery is done' },
        default: { description: 'Not received: retried later' },
      },
    },
  });
  return {
    'plant.created': operation('PlantCreatedEvent', 'A plant was created'),
    'plant.deleted': operation('PlantDeletedEvent', 'A plant was deleted'),
    'webhook.test': operation('WebhookTestEvent', 'A test event an admin asked for'),
  };
}
