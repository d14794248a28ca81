/**
 * Checks responses against the server's own OpenAPI document (`GET /api/openapi.json`): the status must be
 * documented for the operation, and the body must validate against the documented schema. The document is
 * OpenAPI 3.1, whose schemas are JSON Schema 2020-12, so Ajv's 2020 build validates them.
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { expect } from 'vitest';

import { type ApiResponse, describeExchange, parseLossless } from './http-client';

type Json = Record<string, unknown>;
type MediaType = { schema?: Json };
type ResponseObject = { description?: string; headers?: Record<string, { schema?: Json; required?: boolean }>; content?: Record<string, MediaType> };
type Operation = { responses?: Record<string, ResponseObject | { $ref: string }>; parameters?: unknown[] };
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string };
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json>; securitySchemes?: Record<string, Json> };
};

const INT32 = 2 ** 31;
/**
 * Served under /api but not operations of the document: the document itself, the docs UI, and the
 * health check (docs/api.md: "not part of the OpenAPI document").
 */
const NOT_OPERATIONS = [/^\/api\/openapi\.json$/, /^\/api\/docs(\/|$)/, /^\/api\/health$/];
const INT64 = 2 ** 63;

/** int64 values arrive as bigint (lossless parser); JSON Schema validators know numbers only. */
export function bigintsToNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(bigintsToNumbers);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, bigintsToNumbers(entry)]));
  }
  return value;
}

/** Follows a local `#/…` JSON pointer inside the document. */
export function resolvePointer(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are supported, got ${ref}`);
  let node = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) throw new Error(`$ref ${ref} does not resolve in the document`);
    node = (node as Json)[key];
  }
  return node;
}

/** Inlines every `$ref` (siblings of a `$ref` are kept, as 3.1 allows). Throws on a cycle. */
export function inlineRefs(document: unknown, node: unknown, stack: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(document, item, stack));
  if (node === null || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as Json;
  const inlinedRest = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inlineRefs(document, value, stack)]));
  if (typeof $ref !== 'string') return inlinedRest;
  if (stack.includes($ref)) throw new Error(`cyclic $ref ${$ref}: extend the conformance helper`);
  const target = inlineRefs(document, resolvePointer(document, $ref), [...stack, $ref]) as Json;
  return Object.keys(inlinedRest).length === 0 ? target : { ...target, ...inlinedRest };
}

function newAjv() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // OpenAPI's own formats (the Data Types section of the 3.1 specification).
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -INT32 && n < INT32 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -INT64 && n <= INT64 });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  // JSON Schema's, as the answers write times (Date.prototype.toISOString); unchecked, Ajv would only warn.
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text)) });
  return ajv;
}

export type Conformance = {
  document: OpenApiDocument;
  /** The API's base path from `servers[0].url` (`/api`). */
  basePath: string;
  /**
   * `method` as in HTTP, `pathTemplate` as a client writes it (`/api/plants/{id}`) or as the document does
   * (`/plants/{id}`). HEAD is checked as GET with an empty body.
   */
  expectMatchesDocument: (method: string, pathTemplate: string, response: ApiResponse) => void;
  /** Finds the operation from the response's own method and URL; a path or method the document does not
   *  have must answer 404 or 405 with an Error body. */
  expectConforms: (response: ApiResponse) => void;
  /** The documented operation for a method and a concrete path, if any. */
  findTemplate: (method: string, path: string) => string | undefined;
};

function fail(response: ApiResponse, problem: string): never {
  expect.fail(`response does not match the OpenAPI document: ${problem}\n${describeExchange(response)}`);
}

export function createConformance(document: OpenApiDocument): Conformance {
  const ajv = newAjv();
  const validators = new Map<string, ValidateFunction>();
  const basePath = (document.servers?.[0]?.url ?? '').replace(/\/$/, '');

  function validatorFor(key: string, schema: Json): ValidateFunction {
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(inlineRefs(document, schema) as Json);
      validators.set(key, validate);
    }
    return validate;
  }

  const resolved = (schema: Json): Json => inlineRefs(document, schema) as Json;

  /** A header is text; its schema describes the value it carries (style "simple"): 100 for "100". */
  function headerValue(text: string, schema: Json): unknown {
    const types = ([] as unknown[]).concat(schema.type ?? []);
    if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
    if (types.includes('boolean') && /^(true|false)$/.test(text.trim())) return text.trim() === 'true';
    return text;
  }

  function documentPath(pathTemplate: string): string {
    return basePath && pathTemplate.startsWith(`${basePath}/`) ? pathTemplate.slice(basePath.length) : pathTemplate;
  }

  function findTemplate(method: string, path: string): string | undefined {
    const segments = documentPath(path).split('/');
    for (const [template, item] of Object.entries(document.paths)) {
      const expected = template.split('/');
      if (expected.length !== segments.length) continue;
      const fits = expected.every((part, index) => /^\{.+\}$/.test(part) || part === segments[index]);
      if (fits && item[method.toLowerCase()]) return template;
    }
    return undefined;
  }

  function pathExists(path: string): boolean {
    const segments = documentPath(path).split('/');
    return Object.keys(document.paths).some((template) => {
      const expected = template.split('/');
      return expected.length === segments.length && expected.every((part, index) => /^\{.+\}$/.test(part) || part === segments[index]);
    });
  }

  function expectMatchesDocument(method: string, pathTemplate: string, response: ApiResponse): void {
    const isHead = method.toUpperCase() === 'HEAD';
    const operationMethod = isHead ? 'get' : method.toLowerCase();
    const template = documentPath(pathTemplate);
    const operation = document.paths[template]?.[operationMethod];
    if (!operation) fail(response, `the document has no operation ${operationMethod.toUpperCase()} ${template}`);
    const responses = operation.responses ?? {};
    const status = String(response.status);
    let documented = responses[status] ?? responses[`${status[0]}XX`] ?? responses.default;
    if (!documented) fail(response, `status ${status} is not documented for ${operationMethod.toUpperCase()} ${template} (documented: ${Object.keys(responses).join(', ')})`);
    if ('$ref' in documented) documented = resolvePointer(document, documented.$ref as string) as ResponseObject;
    const { content, headers } = documented as ResponseObject;

    for (const [name, header] of Object.entries(headers ?? {})) {
      const value = response.headers.get(name);
      if (value === null) {
        if (header.required) fail(response, `the documented header ${name} is missing`);
        continue;
      }
      if (header.schema) {
        const validate = validatorFor(`${operationMethod} ${template} ${status} header ${name}`, header.schema);
        if (!validate(headerValue(value, resolved(header.schema)))) fail(response, `header ${name} does not match its schema: ${ajv.errorsText(validate.errors)}`);
      }
    }

    const mediaTypes = Object.keys(content ?? {});
    if (mediaTypes.length === 0 || isHead) {
      if (response.text !== '') fail(response, `status ${status} is documented without a body, but there is one`);
      return;
    }
    const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const mediaType = mediaTypes.find((type) => type.toLowerCase() === contentType);
    if (!mediaType) fail(response, `Content-Type "${contentType}" is not documented for ${status} (documented: ${mediaTypes.join(', ')})`);
    const schema = content![mediaType]!.schema;
    if (!schema) return;
    let body: unknown;
    try {
      body = parseLossless(response.text);
    } catch (error) {
      fail(response, `the body is not JSON: ${(error as Error).message}`);
    }
    const validate = validatorFor(`${operationMethod} ${template} ${status} ${mediaType}`, schema);
    if (!validate(bigintsToNumbers(body))) fail(response, `the body does not match the documented schema: ${ajv.errorsText(validate.errors)}`);
  }

  function expectConforms(response: ApiResponse): void {
    const url = new URL(response.request.url);
    if (NOT_OPERATIONS.some((pattern) => pattern.test(url.pathname))) return;
    const method = response.request.method.toUpperCase();
    const lookup = method === 'HEAD' ? 'GET' : method;
    const template = findTemplate(lookup, url.pathname);
    if (template) return expectMatchesDocument(method, template, response);
    if (method === 'OPTIONS' && pathExists(url.pathname)) {
      if (response.status !== 204 && response.status !== 200) fail(response, 'OPTIONS on a documented path must answer 2xx');
      return;
    }
    // Not an operation of the document: the contract's 404 (unknown path) or 405 (wrong method), with an Error.
    const expected = pathExists(url.pathname) ? 405 : 404;
    if (response.status !== expected) {
      fail(response, `${method} ${url.pathname} is not an operation of the document, so the answer must be ${expected}`);
    }
    if (method === 'HEAD') return;
    const validate = validatorFor('component Error', { $ref: '#/components/schemas/Error' });
    let body: unknown;
    try {
      body = parseLossless(response.text);
    } catch (error) {
      fail(response, `the body is not JSON: ${(error as Error).message}`);
    }
    if (!validate(bigintsToNumbers(body))) fail(response, `the body is not an Error: ${ajv.errorsText(validate.errors)}`);
  }

  return { document, basePath, expectMatchesDocument, expectConforms, findTemplate };
}

const loaded = new Map<string, Promise<Conformance>>();

/** Fetches `/api/openapi.json` once per server (without a token, as the contract allows). */
export function loadConformance(baseUrl: string): Promise<Conformance> {
  let conformance = loaded.get(baseUrl);
  if (!conformance) {
    conformance = (async () => {
      const response = await fetch(`${baseUrl}/api/openapi.json`);
      if (response.status !== 200) throw new Error(`GET /api/openapi.json answered ${response.status}`);
      return createConformance((await response.json()) as OpenApiDocument);
    })();
    loaded.set(baseUrl, conformance);
  }
  return conformance;
}
