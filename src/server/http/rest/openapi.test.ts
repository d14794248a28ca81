import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';

import { NO_CONTROL_CHARACTERS } from '@/shared/control-characters';
import { errorCatalog } from '@/shared/errors';
import { BODY_LIMIT_BYTES } from '@/shared/limits';
import { OPTIONAL_PLANT_FIELDS, PLANT_FIELD_NAMES } from '@/shared/plants';
import { appRouter } from '@/server/app-router';

import { stringifyExactJson } from './exact-json';
import { buildOpenApiDocument } from './openapi';

type Operation = { responses: Record<string, { description: string; content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }> };

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument(appRouter);
  const operation = (path: string, method: string) => (document.paths as Record<string, Record<string, Operation>>)[path]![method]!;

  it('is a valid OpenAPI document', async () => {
    // As served: JSON text, int64 bounds with every digit (a reader without bigints rounds them, harmlessly).
    await expect(SwaggerParser.validate(JSON.parse(stringifyExactJson(document)) as never)).resolves.toBeTruthy();
  });

  it('states the contract: title, version, components and the bearer scheme', () => {
    expect(document.info).toMatchObject({ title: 'Plant Store', version: '1.3.0' });
    expect(Object.keys(document.components!.schemas!)).toEqual(expect.arrayContaining(['Plant', 'NewPlant', 'PlantPatch', 'Error']));
    expect(document.components!.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(Object.keys(document.paths!)).toEqual([
      '/plants',
      '/plants/{id}',
      // A file streamed as it is made (`file` in its meta): documented as text/csv.
      '/plants/export',
      '/plants/imports',
      '/plants/imports/{id}',
      '/plants/imports/{id}/parts/{part}',
      '/plants/imports/{id}/preview',
      '/plants/imports/{id}/rows',
      '/plants/imports/{id}/apply',
      '/plants/imports/{id}/stop',
      '/webhooks/endpoints',
      '/webhooks/endpoints/{id}',
      '/webhooks/endpoints/{id}/rotate-secret',
      '/webhooks/endpoints/{id}/test',
      '/webhooks/endpoints/{id}/deliveries',
      '/webhooks/deliveries/{id}/retry',
    ]);
  });

  it('documents every status each operation answers, failures as Error narrowed to the values it can answer', () => {
    const expected = {
      '/plants post': ['200', '400', '401', '408', '409', '413', '415', '422', '429', '500'],
      '/webhooks/endpoints post': ['200', '400', '401', '403', '408', '413', '415', '429', '500', '503'],
      '/webhooks/endpoints/{id} delete': ['204', '400', '401', '403', '404', '429', '500'],
      '/webhooks/endpoints/{id}/deliveries get': ['200', '400', '401', '403', '404', '429', '500'],
      '/webhooks/endpoints/{id}/test post': ['200', '400', '401', '403', '404', '408', '413', '415', '429', '500'],
      '/webhooks/endpoints get': ['200', '401', '403', '429', '500'],
      '/plants get': ['200', '304', '400', '401', '429', '500'],
      '/plants/{id} delete': ['204', '400', '401', '404', '429', '500'],
      '/plants/{id} patch': ['200', '400', '401', '404', '408', '413', '415', '429', '500'],
      '/plants/export get': ['200', '400', '401', '429', '500'],
    };
    for (const [key, statuses] of Object.entries(expected)) {
      const [path, method] = key.split(' ') as [string, string];
      const { responses } = operation(path, method);
      expect(Object.keys(responses).sort(), key).toEqual(statuses);
      for (const status of statuses.filter((candidate) => Number(candidate) >= 400)) {
        expect(responses[status]!.content, `${key} ${status}`).toEqual({
          'application/json': {
            schema: {
              allOf: [
                { $ref: '#/components/schemas/Error' },
                { type: 'object', properties: { error: expect.objectContaining({ type: 'integer', format: 'int32', enum: expect.any(Array) }) } },
              ],
            },
          },
        });
      }
    }
    expect(operation('/plants/{id}', 'delete').responses['204']!.content).toBeUndefined();
    expect(operation('/plants', 'get').responses['200']!.headers).toHaveProperty('Link');
    expect(operation('/plants', 'post').responses['401']!.headers).toHaveProperty('WWW-Authenticate');
    expect(Object.keys(operation('/plants', 'get').responses['429']!.headers!)).toEqual(['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy']);
    expect(operation('/plants', 'post').responses['409']!.headers).toHaveProperty('Retry-After');
    expect(operation('/plants', 'post').responses['200']!.headers).toHaveProperty('Idempotent-Replayed');
  });

  it("lists per status exactly the error values the operation can answer, with the catalogue's words", () => {
    const values = (path: string, method: string, status: string) => {
      const schema = operation(path, method).responses[status]!.content!['application/json']!.schema as { allOf: [unknown, { properties: { error: { enum: number[] } } }] };
      return schema.allOf[1].properties.error.enum;
    };
    expect(values('/plants', 'get', '400')).toEqual([40007, 40021]);
    expect(values('/plants/{id}', 'delete', '400')).toEqual([40008]);
    expect(values('/plants/{id}', 'delete', '404')).toEqual([40401]);
    expect(values('/plants', 'post', '400')).toEqual([40000, 40001, 40002, 40003, 40004, 40005, 40006, 40012, 40022]);
    expect(values('/plants/{id}', 'patch', '400')).toEqual([40000, 40001, 40003, 40004, 40005, 40008, 40020, 40022]);
    // An operation that declares no body: a body with content is refused, by its members too (40005).
    expect(values('/webhooks/endpoints/{id}/rotate-secret', 'post', '400')).toEqual([40000, 40001, 40005, 40008, 40022]);
    expect(values('/webhooks/endpoints/{id}/rotate-secret', 'post', '503')).toEqual([50301]);
    expect(values('/webhooks/deliveries/{id}/retry', 'post', '404')).toEqual([40404]);
    expect(values('/webhooks/endpoints', 'get', '401')).toEqual([40100, 40101]);
    // An import's part is text: no JSON to be malformed, but a CSV that cannot be read.
    expect(values('/plants/imports/{id}/parts/{part}', 'put', '400')).toEqual([40008, 40014, 40015]);
    expect(values('/plants/imports/{id}/parts/{part}', 'put', '404')).toEqual([40405]);
    expect(values('/plants/imports/{id}/apply', 'post', '400')).toEqual([40000, 40001, 40005, 40008, 40014, 40015, 40022]);
    const description = operation('/plants', 'get').responses['400']!.description;
    expect(description).toBe(
      `Bad Request. \`error\` is one of:\n\n- \`40007\`: ${errorCatalog.invalidQueryParameter.meaning}\n- \`40021\`: ${errorCatalog.ownerFilterForAdmins.meaning}`,
    );
    expect(description).toMatch(/`limit`, `after`, `tag`, `q` or `owner`/);
  });

  it('declares Idempotency-Key on create only, as an optional header of 1 to 255 printable ASCII characters', () => {
    const parameters = (document.paths as Record<string, Record<string, { parameters?: { in: string; name: string; required?: boolean; schema: unknown }[] }>>)['/plants']!;
    expect(parameters.post!.parameters).toEqual([
      expect.objectContaining({ in: 'header', name: 'Idempotency-Key', schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 255 }) }),
    ]);
    expect(parameters.post!.parameters![0]!.required).toBeFalsy();
    expect((parameters.get!.parameters ?? []).map((parameter) => parameter.name)).not.toContain('Idempotency-Key');
  });

  it('declares the webhook events (OpenAPI 3.1 webhooks) with the Standard Webhooks headers and the Plant as data', () => {
    const webhooks = (document as unknown as { webhooks: Record<string, { post: { parameters: { name: string }[]; requestBody: { content: Record<string, { schema: unknown }> } } }> }).webhooks;
    expect(Object.keys(webhooks)).toEqual(['plant.created', 'plant.deleted', 'webhook.test']);
    expect(webhooks['plant.created']!.post.parameters.map((parameter) => parameter.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(webhooks['plant.created']!.post.requestBody.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/PlantCreatedEvent' });
    const event = document.components!.schemas!.PlantCreatedEvent as { properties: Record<string, unknown>; required: string[] };
    expect(event.required).toEqual(['type', 'timestamp', 'data']);
    expect(event.properties.data).toEqual({ $ref: '#/components/schemas/Plant' });
  });

  it('describes its query parameters exactly, and every int64 with its exact range', () => {
    const parameters = (operation('/plants', 'get') as unknown as { parameters: { name: string; schema: unknown }[] }).parameters;
    expect(parameters.find((parameter) => parameter.name === 'limit')!.schema).toMatchObject({
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 1000,
      default: 100,
    });
    expect(parameters.find((parameter) => parameter.name === 'after')!.schema).toMatchObject({
      type: 'integer',
      format: 'int64',
      minimum: -(2n ** 63n),
      maximum: 2n ** 63n - 1n,
    });
  });

  it('lists every error value in the description', () => {
    for (const { value } of Object.values(errorCatalog)) expect(document.info.description).toContain(`| ${value} |`);
  });

  it('keeps tRPC-only procedures out', () => {
    const operationIds = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(operationIds.filter((id) => /token|^me$|suggestId|deleteMany|owners|page/i.test(id))).toEqual([]);
    expect(Object.keys(document.paths!).filter((path) => /token|\/me\b|suggest|owners|page/.test(path))).toEqual([]);
  });

  it('has what linters ask of a document: a contact, global tags for every operation tag, a description per operation', () => {
    expect(document.info.contact).toEqual({ name: 'Plant Store' });
    const operations = Object.values(document.paths as Record<string, Record<string, { tags: string[]; description?: string }>>).flatMap((item) => Object.values(item));
    expect(operations.filter((op) => !op.description)).toEqual([]);
    expect(new Set(operations.flatMap((op) => op.tags))).toEqual(new Set((document.tags ?? []).map((tag) => tag.name)));
  });

  it('documents the Plant an answer carries with the same rules as the fields a client sends', () => {
    // Answers are checked for their shape only (src/server/plants/answer.ts); the document must not lose the rules.
    const { Plant: plant, NewPlant: newPlant } = document.components!.schemas! as Record<string, { properties: Record<string, unknown>; description: string }>;
    expect(Object.keys(plant!.properties)).toEqual(['id', ...PLANT_FIELD_NAMES]);
    expect(plant!.properties).toEqual(newPlant!.properties);
    // The contract's fields, exactly.
    expect(plant).toMatchObject({
      type: 'object',
      properties: {
        id: {
          description: 'Identification number of the plant. An int64, written as a JSON number with every digit: read it without rounding (a bigint beyond ±2^53).',
          example: 7,
          type: 'integer',
          format: 'int64',
          minimum: -(2n ** 63n),
          maximum: 2n ** 63n - 1n,
        },
        name: { type: 'string', minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS.source, description: 'The name of the plant', example: 'Monstera deliciosa' },
        tag: { type: 'string', minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS.source, description: 'Tag that specifies the type', example: 'tropical' },
      },
      required: ['id', ...PLANT_FIELD_NAMES.filter((field) => !OPTIONAL_PLANT_FIELDS.includes(field))],
      additionalProperties: false,
    });
    expect(plant!.description).toMatch(/^A plant\. .* left out when the plant has none\.$/);
    for (const field of OPTIONAL_PLANT_FIELDS) expect(plant!.description).toContain(`\`${field}\``);
    const list = operation('/plants', 'get') as unknown as { responses: { 200: { content: { 'application/json': { schema: unknown } } } } };
    expect(list.responses[200].content['application/json'].schema).toEqual({ type: 'array', maxItems: 1000, items: { $ref: '#/components/schemas/Plant' } });
  });

  it("takes an import's part as text/csv: the file's text, at most 64 KiB", () => {
    const part = operation('/plants/imports/{id}/parts/{part}', 'put') as unknown as { requestBody: { content: Record<string, { schema: unknown }> }; parameters: { in: string; name: string }[] };
    expect(part.requestBody.content).toEqual({ 'text/csv': { schema: { $ref: '#/components/schemas/PlantImportPart' } } });
    expect(document.components!.schemas!.PlantImportPart).toMatchObject({ type: 'string', maxLength: BODY_LIMIT_BYTES });
    expect(part.parameters.map((parameter) => [parameter.in, parameter.name])).toEqual([
      ['path', 'id'],
      ['path', 'part'],
    ]);
  });

  it('adds PATCH (a merge patch of PlantPatch) and the list filters, and leaves the three operations as they were', () => {
    const patch = operation('/plants/{id}', 'patch') as unknown as { requestBody: { content: Record<string, { schema: unknown }> } };
    expect(Object.keys(patch.requestBody.content)).toEqual(['application/merge-patch+json', 'application/json']);
    expect(patch.requestBody.content['application/merge-patch+json']!.schema).toEqual({ $ref: '#/components/schemas/PlantPatch' });
    expect(document.components!.schemas!.PlantPatch).toMatchObject({ additionalProperties: false, properties: { name: { maxLength: 200 } } });
    const parameters = (operation('/plants', 'get') as unknown as { parameters: { in: string; name: string; schema: { maxLength?: number } }[] }).parameters;
    // The conditional list's header (docs/api.md, "Conditional lists") beside the query.
    expect(parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name)).toEqual(['If-None-Match']);
    expect(parameters.filter((parameter) => parameter.in === 'query').map((parameter) => [parameter.name, parameter.schema.maxLength])).toEqual([
      ['limit', undefined],
      ['after', undefined],
      ['tag', 100],
      ['q', 200],
      ['owner', 64],
    ]);
    expect(Object.keys(document.paths!['/plants']!)).toEqual(['post', 'get']);
    expect(Object.keys(document.paths!['/plants/{id}']!).sort()).toEqual(['delete', 'patch']);
  });
});
