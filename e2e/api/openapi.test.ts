/**
 * The machine-readable contract: GET /api/openapi.json (no token) and the interactive docs at /api/docs.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import { beforeAll, describe, expect, it } from 'vitest';

import { PLANT_FIELD_NAMES } from '@/shared/plants';

import { expectJsonContentType, expectStatus, setupServer } from '@test-support/api-fixture';
import { bigintsToNumbers, createConformance, inlineRefs, type OpenApiDocument } from '@test-support/openapi-conformance';
import { type ApiResponse, parseLossless } from '@test-support/http-client';

const server = setupServer();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let response: ApiResponse;
let doc: OpenApiDocument & Json;

beforeAll(async () => {
  response = await server.anonymous.get('/api/openapi.json', { authorization: null });
  doc = JSON.parse(response.text);
});

/** The operation for a full path such as `/api/plants/{id}`, whether the base path is in servers or paths. */
function operation(method: string, fullPath: string): Json {
  const base = (doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
  const relative = base && fullPath.startsWith(base) ? fullPath.slice(base.length) : fullPath;
  const found = doc.paths[relative]?.[method] ?? doc.paths[fullPath]?.[method];
  expect(found, `${method.toUpperCase()} ${fullPath} in the document`).toBeDefined();
  return found as Json;
}

/** A schema with its $refs inlined. */
const resolved = (schema: unknown): Json => inlineRefs(doc, schema) as Json;

function responseSchema(op: Json, status: string): Json {
  const schema = op.responses?.[status]?.content?.['application/json']?.schema;
  expect(schema, `application/json schema of the ${status} response`).toBeDefined();
  return schema as Json;
}

/** An error answer's schema: the Error component, narrowed to the `error` values this operation can answer there. */
function expectErrorSchema(op: Json, status: string): void {
  const schema = responseSchema(op, status);
  expect(schema.allOf?.[0], `the ${status} answer is an Error`).toEqual({ $ref: '#/components/schemas/Error' });
  expect(schema.allOf?.[1]?.properties?.error?.enum, `the ${status} answer's error values`).toEqual(expect.arrayContaining([expect.any(Number)]));
}

function parameter(op: Json, where: string, name: string): Json {
  const found = (op.parameters ?? []).map(resolved).find((p: Json) => p.in === where && p.name === name);
  expect(found, `${where} parameter ${name}`).toBeDefined();
  return found as Json;
}

describe('GET /api/openapi.json', () => {
  it('is served without a token with 200 and application/json', () => {
    expectStatus(response, 200);
    expectJsonContentType(response);
  });

  it('passes an OpenAPI validator (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  it('is OpenAPI 3.1 with title "Plant Store" and version 1.3.0 (the contract\'s additions up to the CSV import)', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBe('Plant Store');
    expect(doc.info.version).toBe('1.3.0');
  });

  it('has the three operations of the contract, PATCH (1.1.0), the CSV export and the CSV import (1.3.0) under /api/plants, and only webhook administration beside them', () => {
    const base = (doc.servers?.[0]?.url ?? '').replace(/\/$/, '');
    const found = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((key) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(key))
        .map((method) => `${method.toUpperCase()} ${base}${path}`),
    );
    expect(found.filter((operation) => !operation.includes('/api/webhooks/') && !operation.includes('/api/plants/imports')).sort()).toEqual([
      'DELETE /api/plants/{id}',
      'GET /api/plants',
      'GET /api/plants/export',
      'PATCH /api/plants/{id}',
      'POST /api/plants',
    ]);
    expect(found.filter((operation) => operation.includes('/api/plants/imports')).sort()).toEqual([
      'GET /api/plants/imports',
      'GET /api/plants/imports/{id}',
      'GET /api/plants/imports/{id}/rows',
      'POST /api/plants/imports',
      'POST /api/plants/imports/{id}/apply',
      'POST /api/plants/imports/{id}/preview',
      'POST /api/plants/imports/{id}/stop',
      'PUT /api/plants/imports/{id}/parts/{part}',
    ]);
    expect(found.filter((operation) => operation.includes('/api/webhooks/')).sort()).toEqual([
      'DELETE /api/webhooks/endpoints/{id}',
      'GET /api/webhooks/endpoints',
      'GET /api/webhooks/endpoints/{id}',
      'GET /api/webhooks/endpoints/{id}/deliveries',
      'PATCH /api/webhooks/endpoints/{id}',
      'POST /api/webhooks/deliveries/{id}/retry',
      'POST /api/webhooks/endpoints',
      'POST /api/webhooks/endpoints/{id}/rotate-secret',
      'POST /api/webhooks/endpoints/{id}/test',
    ]);
  });
});

describe('components', () => {
  it('has the schemas Plant, NewPlant and Error', () => {
    expect(Object.keys(doc.components?.schemas ?? {})).toEqual(expect.arrayContaining(['Plant', 'NewPlant', 'Error']));
  });

  it('describes no other response shape: every component schema is used somewhere', () => {
    const schemas = Object.keys(doc.components?.schemas ?? {});
    const text = JSON.stringify({ ...doc, components: { ...doc.components, schemas: undefined } });
    const withinComponents = JSON.stringify(doc.components?.schemas ?? {});
    const unused = schemas.filter((name) => {
      const ref = `"#/components/schemas/${name.replace(/~/g, '~0').replace(/\//g, '~1')}"`;
      return !text.includes(ref) && !withinComponents.includes(ref);
    });
    expect(unused, 'component schemas nothing refers to').toEqual([]);
  });

  it('Error is exactly {error: int32, message: string}, both required, nothing else', () => {
    const error = doc.components!.schemas!.Error as Json;
    expect(error.type).toBe('object');
    expect([...error.required].sort()).toEqual(['error', 'message']);
    expect(Object.keys(error.properties).sort()).toEqual(['error', 'message']);
    expect(error.properties.error).toMatchObject({ type: 'integer', format: 'int32' });
    expect(error.properties.message).toMatchObject({ type: 'string' });
    expect(error.additionalProperties).toBe(false);
  });

  it('Plant has id (int64), name and tag as strings; id and name required, tag optional', () => {
    const plant = resolved(doc.components!.schemas!.Plant);
    expect(plant.type).toBe('object');
    expect(plant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(plant.properties.name).toMatchObject({ type: 'string' });
    expect(plant.properties.tag).toMatchObject({ type: 'string' });
    expect([...plant.required].sort()).toEqual(['id', 'name']);
  });

  it('NewPlant has id (int64), name and tag; id and name required; no other field allowed', () => {
    expect(doc.components?.schemas?.NewPlant, 'components.schemas.NewPlant').toBeDefined();
    const newPlant = resolved(doc.components?.schemas?.NewPlant);
    expect(newPlant.type).toBe('object');
    // The contract's fields, and every other the plant declares (shared/plants.ts, `plantFields`).
    expect(Object.keys(newPlant.properties ?? {})).toEqual(['id', ...PLANT_FIELD_NAMES]);
    expect(PLANT_FIELD_NAMES).toEqual(expect.arrayContaining(['name', 'tag']));
    expect(newPlant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect([...(newPlant.required ?? [])].sort()).toEqual(['id', 'name']);
    expect(newPlant.additionalProperties).toBe(false);
  });

  it('documents the length limits: name 1 to 200, tag 1 to 100', () => {
    const plant = resolved(doc.components!.schemas!.Plant);
    expect(plant.properties.name).toMatchObject({ minLength: 1, maxLength: 200 });
    expect(plant.properties.tag).toMatchObject({ minLength: 1, maxLength: 100 });
  });

  it('has the bearerAuth security scheme (http, bearer)', () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('operations', () => {
  const securedBy = (op: Json) => (op.security ?? doc.security ?? []).some((requirement: Json) => 'bearerAuth' in requirement);

  it('POST /api/plants takes a required NewPlant as application/json', () => {
    const op = operation('post', '/api/plants');
    expect(op.requestBody?.required).toBe(true);
    expect(op.requestBody?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/NewPlant' });
  });

  it('POST /api/plants answers 200 with a Plant, and 400, 401, 413, 415 with an Error', () => {
    const op = operation('post', '/api/plants');
    expect(responseSchema(op, '200')).toEqual({ $ref: '#/components/schemas/Plant' });
    for (const status of ['400', '401', '413', '415']) expectErrorSchema(op, status);
  });

  it('GET /api/plants takes limit (int32, 1 to 1000, default 100) and after (int64) in the query', () => {
    const op = operation('get', '/api/plants');
    const limit = parameter(op, 'query', 'limit');
    expect(limit.required ?? false).toBe(false);
    expect(limit.schema).toMatchObject({ type: 'integer', format: 'int32', minimum: 1, maximum: 1000, default: 100 });
    const after = parameter(op, 'query', 'after');
    expect(after.required ?? false).toBe(false);
    expect(after.schema).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('GET /api/plants answers 200 with an array of Plant and a Link header, and 400, 401 with an Error', () => {
    const op = operation('get', '/api/plants');
    expect(responseSchema(op, '200')).toEqual({ type: 'array', maxItems: 1000, items: { $ref: '#/components/schemas/Plant' } });
    expect(Object.keys(op.responses['200'].headers ?? {}).map((name) => name.toLowerCase())).toContain('link');
    for (const status of ['400', '401']) expectErrorSchema(op, status);
  });

  it('DELETE /api/plants/{id} takes a required int64 path parameter id', () => {
    const id = parameter(operation('delete', '/api/plants/{id}'), 'path', 'id');
    expect(id.required).toBe(true);
    expect(id.schema).toMatchObject({ type: 'integer', format: 'int64' });
  });

  it('DELETE /api/plants/{id} answers 204 without a body, and 400, 401, 404 with an Error', () => {
    const op = operation('delete', '/api/plants/{id}');
    expect(op.responses['204']).toBeDefined();
    expect(op.responses['204'].content).toBeUndefined();
    expect(op.responses['200']).toBeUndefined();
    for (const status of ['400', '401', '404']) expectErrorSchema(op, status);
  });

  it('every operation needs bearerAuth and documents 500 with an Error', () => {
    for (const [method, path] of [['post', '/api/plants'], ['get', '/api/plants'], ['delete', '/api/plants/{id}']] as const) {
      const op = operation(method, path);
      expect(securedBy(op), `${method} ${path} secured by bearerAuth`).toBe(true);
      expectErrorSchema(op, '500');
    }
  });

  it('documents the 401 challenge header WWW-Authenticate on every operation', () => {
    for (const [method, path] of [['post', '/api/plants'], ['get', '/api/plants'], ['delete', '/api/plants/{id}']] as const) {
      const headers = Object.keys(operation(method, path).responses['401']?.headers ?? {}).map((name) => name.toLowerCase());
      expect(headers, `${method} ${path}`).toContain('www-authenticate');
    }
  });

  it("describes each operation's own 400 causes (list: limit/after; delete: the id)", () => {
    expect(operation('get', '/api/plants').responses['400'].description).toMatch(/limit|after/i);
    expect(operation('get', '/api/plants').responses['400'].description).not.toMatch(/NewPlant/);
    expect(operation('delete', '/api/plants/{id}').responses['400'].description).toMatch(/\bid\b/i);
    expect(operation('delete', '/api/plants/{id}').responses['400'].description).not.toMatch(/NewPlant/);
  });
});

describe('the suite holds answers to the error values each operation declares', () => {
  // Every response of the suite passes through this check (test-support/api-fixture.ts): an error value an
  // operation does not declare for its status fails the test that met it.
  const answer = (method: string, path: string, status: number, body: string): ApiResponse => ({
    request: { method, url: `${server.baseUrl}${path}` },
    status,
    headers: new Headers({ 'content-type': 'application/json' }),
    text: body,
    json: parseLossless(body),
  });

  it('takes a declared value and refuses one the operation cannot answer', () => {
    const check = createConformance(doc);
    check.expectConforms(answer('GET', '/api/plants', 400, '{"error": 40007, "message": "limit must be an integer from 1 to 1000"}'));
    check.expectConforms(answer('DELETE', '/api/plants/7', 404, '{"error": 40401, "message": "no plant with id 7"}'));
    expect(() => check.expectConforms(answer('GET', '/api/plants', 400, '{"error": 40006, "message": "a plant with id 7 already exists"}'))).toThrow(/schema/);
    expect(() => check.expectConforms(answer('DELETE', '/api/plants/7', 404, '{"error": 40403, "message": "no webhook endpoint with id 7"}'))).toThrow(/schema/);
    expect(() => check.expectConforms(answer('DELETE', '/api/plants/7', 400, '{"error": 40005, "message": "unknown field"}'))).toThrow(/schema/);
  });
});

describe('/api/docs', () => {
  let page: ApiResponse;
  let assets: string[];

  beforeAll(async () => {
    page = await server.anonymous.get('/api/docs', { authorization: null });
    // What the page loads (stylesheets, icon, scripts); its one link, back to the admin page, is not an asset.
    assets = [...page.text.matchAll(/<(?:link|script)\s[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((match) => match[1]!);
  });

  it('serves an HTML page without a token', () => {
    expectStatus(page, 200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toMatch(/<html/i);
  });

  it('references only same-origin assets (no CDN)', () => {
    expect(assets.length).toBeGreaterThan(0);
    const origin = new URL(server.baseUrl).origin;
    for (const asset of assets) expect(new URL(asset, `${server.baseUrl}/api/docs`).origin, asset).toBe(origin);
  });

  it('has assets that all load with 200 and a body', async () => {
    for (const asset of assets) {
      const loaded = await server.anonymous.get(new URL(asset, `${server.baseUrl}/api/docs`).href, { authorization: null });
      expect(loaded.status, asset).toBe(200);
      expect(loaded.text.length, asset).toBeGreaterThan(0);
    }
  });

  it('points Swagger UI at /api/openapi.json (in the page or its own scripts)', async () => {
    const scripts = await Promise.all(
      assets
        .filter((asset) => !/swagger-ui(-bundle)?\.(js|css)$/.test(asset))
        .map(async (asset) => (await server.anonymous.get(new URL(asset, `${server.baseUrl}/api/docs`).href, { authorization: null })).text),
    );
    expect([page.text, ...scripts].join('\n')).toContain('/api/openapi.json');
  });

  it('answers an unknown docs asset with 404', async () => {
    const response = await server.anonymous.get('/api/docs/nope.js', { authorization: null });
    expect(response.status).toBe(404);
  });
});

/**
 * The interface (docs/contract.md, "Where it comes from") as a generated client would type it: Plant {name, tag?},
 * NewPlant {id, name, tag?}, Error {error, message}, under {base_url} = /api. Such a client must work
 * against the server unchanged: what it sends is accepted, what it gets back fits its types.
 */
describe('a client written from the interface shapes', () => {
  const ajv = new Ajv2020({ strict: false });
  const interfacePlant = {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, tag: { type: 'string' } },
  };
  const interfaceError = {
    type: 'object',
    required: ['error', 'message'],
    properties: { error: { type: 'integer', minimum: -(2 ** 31), maximum: 2 ** 31 - 1 }, message: { type: 'string' } },
  };
  const plantValidator = ajv.compile(interfacePlant);
  const listValidator = ajv.compile({ type: 'array', items: interfacePlant });
  const errorValidator = ajv.compile(interfaceError);

  it('creates with a NewPlant and gets back a Plant', async () => {
    const response = await server.admin.post('/api/plants', JSON.stringify({ id: 42, name: 'Interface plant', tag: 'typed' }));
    expectStatus(response, 200);
    expect(plantValidator(bigintsToNumbers(response.json)), ajv.errorsText(plantValidator.errors)).toBe(true);
    expect(response.json).toMatchObject({ name: 'Interface plant', tag: 'typed' });
  });

  it('lists an array of Plant', async () => {
    const response = await server.admin.get('/api/plants');
    expectStatus(response, 200);
    expect(listValidator(bigintsToNumbers(response.json)), ajv.errorsText(listValidator.errors)).toBe(true);
  });

  it('deletes with no body in the answer', async () => {
    const response = await server.admin.delete('/api/plants/42');
    expect(response.status).toBeGreaterThanOrEqual(200);
    expect(response.status).toBeLessThan(300);
    expect(response.text).toBe('');
  });

  it('reads every failure as an Error', async () => {
    for (const response of [
      await server.admin.post('/api/plants', '{"name": "no id"}'),
      await server.admin.get('/api/plants?limit=0'),
      await server.admin.delete('/api/plants/42'),
      await server.anonymous.get('/api/plants'),
    ]) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(errorValidator(bigintsToNumbers(response.json)), `${response.status} ${response.text}`).toBe(true);
    }
  });
});
