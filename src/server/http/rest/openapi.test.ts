import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';

import { errorCatalog } from '@/shared/errors';
import { appRouter } from '@/server/trpc/app-router';

import { buildOpenApiDocument } from './openapi';

type Operation = { responses: Record<string, { description: string; content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }> };

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument(appRouter);
  const operation = (path: string, method: string) => (document.paths as Record<string, Record<string, Operation>>)[path]![method]!;

  it('is a valid OpenAPI document', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('states the contract: title, version, components and the bearer scheme', () => {
    expect(document.info).toMatchObject({ title: 'Plant Store', version: '1.1.0' });
    expect(Object.keys(document.components!.schemas!)).toEqual(expect.arrayContaining(['Plant', 'NewPlant', 'PlantPatch', 'Error']));
    expect(document.components!.securitySchemes).toEqual({ bearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect(Object.keys(document.paths!)).toEqual([
      '/plants',
      '/plants/{id}',
      '/webhooks/endpoints',
      '/webhooks/endpoints/{id}',
      '/webhooks/endpoints/{id}/rotate-secret',
      '/webhooks/endpoints/{id}/test',
      '/webhooks/endpoints/{id}/deliveries',
      '/webhooks/deliveries/{id}/retry',
      // Served beside the REST chain (http/rest/export.ts), and documented with the rest.
      '/plants/export',
    ]);
  });

  it('documents every status each operation answers, failures as Error', () => {
    const expected = {
      '/plants post': ['200', '400', '401', '408', '409', '413', '415', '422', '429', '500'],
      '/webhooks/endpoints post': ['200', '400', '401', '403', '429', '500', '503'],
      '/webhooks/endpoints/{id} delete': ['204', '400', '401', '403', '404', '429', '500'],
      '/webhooks/endpoints/{id}/deliveries get': ['200', '400', '401', '403', '404', '429', '500'],
      '/plants get': ['200', '400', '401', '429', '500'],
      '/plants/{id} delete': ['204', '400', '401', '404', '429', '500'],
      '/plants/{id} patch': ['200', '400', '401', '404', '408', '413', '415', '429', '500'],
      '/plants/export get': ['200', '400', '401', '429', '500'],
    };
    for (const [key, statuses] of Object.entries(expected)) {
      const [path, method] = key.split(' ') as [string, string];
      const { responses } = operation(path, method);
      expect(Object.keys(responses).sort()).toEqual(statuses);
      for (const status of statuses.filter((candidate) => Number(candidate) >= 400)) {
        expect(responses[status]!.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
      }
    }
    expect(operation('/plants/{id}', 'delete').responses['204']!.content).toBeUndefined();
    expect(operation('/plants', 'get').responses['200']!.headers).toHaveProperty('Link');
    expect(operation('/plants', 'post').responses['401']!.headers).toHaveProperty('WWW-Authenticate');
    expect(operation('/plants', 'get').responses['429']!.headers).toHaveProperty('Retry-After');
    expect(operation('/plants', 'post').responses['409']!.headers).toHaveProperty('Retry-After');
    expect(operation('/plants', 'post').responses['200']!.headers).toHaveProperty('Idempotent-Replayed');
  });

  it('declares Idempotency-Key on create only, as an optional header of 1 to 255 printable ASCII characters', () => {
    const parameters = (document.paths as Record<string, Record<string, { parameters?: { in: string; name: string; required?: boolean; schema: unknown }[] }>>)['/plants']!;
    expect(parameters.post!.parameters).toEqual([
      expect.objectContaining({ in: 'header', name: 'Idempotency-Key', schema: expect.objectContaining({ type: 'string', minLength: 1, maxLength: 255 }) }),
    ]);
    expect(parameters.post!.parameters![0]!.required).toBeFalsy();
    expect(JSON.stringify(parameters.get!.parameters)).not.toContain('Idempotency-Key');
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

  it("describes each operation's failures in its own words and its query parameters exactly", () => {
    expect(operation('/plants', 'get').responses['400']!.description).toMatch(/^limit, after or a filter \(tag, q, owner\) is not valid/);
    expect(operation('/plants/{id}', 'delete').responses['400']!.description).toMatch(/^The id is not an int64/);
    const parameters = (operation('/plants', 'get') as unknown as { parameters: { name: string; schema: unknown }[] }).parameters;
    expect(parameters.find((parameter) => parameter.name === 'limit')!.schema).toMatchObject({
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 1000,
      default: 100,
    });
    expect(parameters.find((parameter) => parameter.name === 'after')!.schema).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('lists every error value in the description', () => {
    for (const { value } of Object.values(errorCatalog)) expect(document.info.description).toContain(`| ${value} |`);
  });

  it('keeps tRPC-only procedures out', () => {
    expect(JSON.stringify(document)).not.toMatch(/tokens|"me"|suggestId|deleteMany|owners|plants\.page/);
  });

  it('documents the Plant an answer carries with the same rules as the fields a client sends', () => {
    // Answers are checked for their shape only (src/server/plants/answer.ts); the document must not lose the rules.
    expect(document.components!.schemas!.Plant).toEqual({
      type: 'object',
      properties: {
        id: { description: 'Identification number of the plant', example: 7, type: 'integer', format: 'int64' },
        name: { type: 'string', minLength: 1, maxLength: 200, pattern: '^\\P{Cc}*$', description: 'The name of the plant', example: 'Monstera deliciosa' },
        tag: { type: 'string', minLength: 1, maxLength: 100, pattern: '^\\P{Cc}*$', description: 'Tag that specifies the type', example: 'tropical' },
      },
      required: ['id', 'name'],
      additionalProperties: false,
      description: 'A plant. `tag` is left out when the plant has none.',
    });
    const list = operation('/plants', 'get') as unknown as { responses: { 200: { content: { 'application/json': { schema: unknown } } } } };
    expect(list.responses[200].content['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Plant' } });
  });

  it('adds PATCH (a merge patch of PlantPatch) and the list filters, and leaves the three operations as they were', () => {
    const patch = operation('/plants/{id}', 'patch') as unknown as { requestBody: { content: Record<string, { schema: unknown }> } };
    expect(Object.keys(patch.requestBody.content)).toEqual(['application/merge-patch+json', 'application/json']);
    expect(patch.requestBody.content['application/merge-patch+json']!.schema).toEqual({ $ref: '#/components/schemas/PlantPatch' });
    expect(document.components!.schemas!.PlantPatch).toMatchObject({ additionalProperties: false, properties: { name: { maxLength: 200 } } });
    const parameters = (operation('/plants', 'get') as unknown as { parameters: { name: string; schema: { maxLength?: number } }[] }).parameters;
    expect(parameters.map((parameter) => [parameter.name, parameter.schema.maxLength])).toEqual([
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
