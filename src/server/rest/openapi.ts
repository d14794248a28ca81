import type { AnyTRPCRouter } from '@trpc/server';
import { generateOpenApiDocument, type OpenApiBuilder } from 'trpc-to-openapi';

import { errorCatalog } from '@/server/errors';

export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;
type SchemaObject = NonNullable<NonNullable<ReturnType<OpenApiBuilder['getSpec']>['components']>['schemas']>[string];
type ResponseObject = { description: string; headers?: Json; content?: Record<string, { schema: Json }> };
type Operation = { responses: Record<string, ResponseObject> };

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
export function buildOpenApiDocument(router: AnyTRPCRouter) {
  const document = generateOpenApiDocument(router, {
    title: 'Plant Store',
    version: API_VERSION,
    description: `A store of plants. Every call needs \`Authorization: Bearer <token>\`.\n\n| error | status | meaning |\n|---|---|---|\n${errorTable}`,
    baseUrl: '/api',
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token such as `pst_…` from `npm run token -- create`.' } },
  });
  const schemas = (document.components!.schemas ??= {});
  schemas.Error = errorSchema;
  const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };

  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, Operation>)) {
      const responses = operation.responses;
      const success = responses['200'];
      if (success && Object.keys(success.content?.['application/json']?.schema ?? {}).length === 0) {
        delete responses['200'];
        responses['204'] = { description: success.description, headers: success.headers };
      }
      responses['500'] ??= { description: 'The server failed' };
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        responses[status] = {
          description: describeStatus(Number(status), response.description),
          ...(status === '401' && {
            headers: {
              'WWW-Authenticate': {
                description: 'The challenge: `Bearer realm="plants"`, with `error="invalid_token"` when a token was sent.',
                schema: { type: 'string' },
              },
            },
          }),
          content: errorContent,
        };
      }
    }
  }
  return document;
}
