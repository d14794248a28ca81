import type { ServerResponse } from 'node:http';

import { decodeUtf8, readBody } from '../guards/body';
import { refuseDeepJson } from '../guards/json-depth';
import type { FrontRequest } from '../request';
import { refuse } from '../reply';

import { checkContentType } from './content-type';
import { parseExactJson } from './exact-json';

function describe(body: unknown): string {
  if (body === null) return 'null';
  if (Array.isArray(body)) return 'an array';
  return typeof body === 'bigint' ? 'a number' : `a ${typeof body}`;
}

/**
 * Body text as a JSON object with every integer exact (bigint), or a 400 that says what is wrong with it.
 * Nesting is bounded before anything parses it.
 */
function parseJsonObject(text: string): Record<string, unknown> {
  refuseDeepJson(text, 'the body');
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    const reason = text.trim() === '' ? 'it is empty' : (error as Error).message;
    throw refuse('invalidJson', `the body is not valid JSON: ${reason}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refuse('bodyNotObject', `the body must be a JSON object, not ${describe(body)}`);
  return body as Record<string, unknown>;
}

/** `charge` is told a body's size once it is read, before anything parses it (it may refuse with a 429). */
type ChargeForBody = (bytes: number) => void;

/** The body as a JSON object with every integer exact (bigint), or a 400 that says what is wrong with it. */
export async function readJsonObject(request: FrontRequest, response: ServerResponse, charge: ChargeForBody): Promise<Record<string, unknown>> {
  const bytes = await readBody(request, response);
  charge(bytes.byteLength);
  return parseJsonObject(decodeUtf8(bytes));
}

/**
 * The body of an operation that declares none (`POST …/rotate-secret`): a generated client calls it with
 * no body at all, with or without a Content-Type; others send an empty object. Both are taken. A body
 * with content is read as a JSON body is (media type, JSON, an object), and any member is refused as an
 * unknown field: nothing a client sends is silently dropped.
 */
export async function readAbsentBody(request: FrontRequest, response: ServerResponse, operation: string, charge: ChargeForBody): Promise<Record<string, never>> {
  const bytes = await readBody(request, response);
  if (bytes.byteLength === 0) return {};
  charge(bytes.byteLength);
  checkContentType(request.raw.headers['content-type'], ['application/json']);
  const fields = Object.keys(parseJsonObject(decodeUtf8(bytes)));
  if (fields.length > 0) {
    const named = fields.slice(0, 3).map((field) => `"${field.length > 40 ? `${field.slice(0, 40)}…` : field}"`);
    throw refuse('unknownField', `unknown field${fields.length > 1 ? 's' : ''} ${named.join(', ')}${fields.length > 3 ? ', …' : ''}: ${operation} takes no body`);
  }
  return {};
}
