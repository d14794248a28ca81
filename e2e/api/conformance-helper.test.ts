/**
 * The OpenAPI check that every other file relies on must be able to fail: this file feeds it made-up
 * responses against a small document (no server).
 */
import { describe, expect, it } from 'vitest';

import { createConformance, type OpenApiDocument } from '@test-support/openapi-conformance';
import { type ApiResponse, parseLossless } from '@test-support/http-client';

const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Test', version: '1.0.0' },
  servers: [{ url: '/api' }],
  paths: {
    '/things': {
      get: {
        responses: {
          200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } } } },
          400: { description: 'bad', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    },
    '/things/{id}': { delete: { responses: { 204: { description: 'gone' } } } },
  },
  components: {
    schemas: {
      Thing: {
        type: 'object',
        required: ['id', 'name'],
        additionalProperties: false,
        properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string', maxLength: 3 } },
      },
      Error: {
        type: 'object',
        required: ['error', 'message'],
        additionalProperties: false,
        properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } },
      },
    },
  },
};

const check = createConformance(document);

function response(method: string, path: string, status: number, text: string, contentType = 'application/json'): ApiResponse {
  let json: unknown;
  try {
    json = text ? parseLossless(text) : undefined;
  } catch {
    json = undefined;
  }
  return {
    request: { method, url: `http://127.0.0.1:1${path}` },
    status,
    headers: new Headers(text ? { 'content-type': contentType } : {}),
    text,
    json,
  };
}

describe('the OpenAPI conformance check', () => {
  it('passes a documented status with a matching body, int64 beyond 2^53 included', () => {
    check.expectMatchesDocument('GET', '/api/things', response('GET', '/api/things', 200, '[{"id": 9223372036854775807, "name": "abc"}]'));
    check.expectConforms(response('GET', '/api/things', 200, '[]'));
    check.expectConforms(response('DELETE', '/api/things/5', 204, ''));
  });

  it('fails an undocumented status', () => {
    expect(() => check.expectConforms(response('GET', '/api/things', 404, '{"error": 1, "message": "x"}'))).toThrow(/not documented/);
  });

  it('fails a body that breaks the schema reached through $ref', () => {
    expect(() => check.expectConforms(response('GET', '/api/things', 200, '[{"id": 1, "name": "toolong"}]'))).toThrow(/schema/);
    expect(() => check.expectConforms(response('GET', '/api/things', 200, '[{"id": 1, "name": "a", "owner": 2}]'))).toThrow(/schema/);
    expect(() => check.expectConforms(response('GET', '/api/things', 200, '[{"id": 1.5, "name": "a"}]'))).toThrow(/schema/);
    expect(() => check.expectConforms(response('GET', '/api/things', 400, '{"error": 1, "message": "x", "stack": "at x"}'))).toThrow(/schema/);
  });

  it('fails an error value the operation does not declare for that status', () => {
    const declaring = createConformance({
      ...document,
      paths: {
        '/things': {
          get: {
            responses: {
              400: {
                description: 'bad',
                content: {
                  'application/json': {
                    schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { error: { type: 'integer', enum: [40007, 40021] } } }] },
                  },
                },
              },
            },
          },
        },
      },
    });
    declaring.expectConforms(response('GET', '/api/things', 400, '{"error": 40007, "message": "limit must be an integer from 1 to 1000"}'));
    expect(() => declaring.expectConforms(response('GET', '/api/things', 400, '{"error": 40006, "message": "a plant with id 7 already exists"}'))).toThrow(/schema/);
  });

  it('fails an int32 error value out of range', () => {
    expect(() => check.expectConforms(response('GET', '/api/things', 400, '{"error": 2147483648, "message": "x"}'))).toThrow(/schema/);
  });

  it('fails a body where the document has none, and a content type it does not document', () => {
    expect(() => check.expectConforms(response('DELETE', '/api/things/5', 204, '{}'))).toThrow(/without a body/);
    expect(() => check.expectConforms(response('GET', '/api/things', 200, '[]', 'text/plain'))).toThrow(/Content-Type/);
  });

  it('wants 405 with an Error for a documented path with another method, and 404 for an unknown path', () => {
    check.expectConforms(response('PUT', '/api/things', 405, '{"error": 40500, "message": "no"}'));
    check.expectConforms(response('GET', '/api/nope', 404, '{"error": 40400, "message": "no"}'));
    expect(() => check.expectConforms(response('PUT', '/api/things', 404, '{"error": 40400, "message": "no"}'))).toThrow(/405/);
    expect(() => check.expectConforms(response('GET', '/api/nope', 404, '<html>not found</html>', 'text/html'))).toThrow(/not JSON/);
  });
});

describe('the OpenAPI conformance check on headers', () => {
  const withHeader = createConformance({
    ...document,
    paths: {
      '/slow': {
        get: {
          responses: {
            429: {
              description: 'slow down',
              headers: { 'Retry-After': { schema: { type: 'integer', minimum: 1 } } },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
          },
        },
      },
    },
  });
  const tooMany = (retryAfter: string) => {
    const result = response('GET', '/api/slow', 429, '{"error": 42900, "message": "wait"}');
    result.headers.set('retry-after', retryAfter);
    return result;
  };

  it('reads a header documented as an integer as the number it carries', () => {
    withHeader.expectConforms(tooMany('100'));
  });

  it('fails a header that breaks its schema', () => {
    expect(() => withHeader.expectConforms(tooMany('soon'))).toThrow(/Retry-After/);
    expect(() => withHeader.expectConforms(tooMany('0'))).toThrow(/Retry-After/);
  });
});
