import { decodeUtf8 } from '../guards/body';
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
 * Body bytes as a JSON object with every integer exact (bigint), or a 400 that says what is wrong with them.
 * Nesting is bounded before anything parses it.
 */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  const text = decodeUtf8(bytes);
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

/**
 * The body of an operation that declares none (`POST …/rotate-secret`): a generated client calls it with
 * no body at all, with or without a Content-Type; others send an empty object. Both are taken. A body
 * with content is read as a JSON body is (media type, JSON, an object), and any member is refused as an
 * unknown field: nothing a client sends is silently dropped.
 */
export function parseAbsentBody(request: FrontRequest, bytes: Buffer, operation: string): Record<string, never> {
  if (bytes.byteLength === 0) return {};
  checkContentType(request.raw.headers['content-type'], ['application/json']);
  const fields = Object.keys(parseJsonObject(bytes));
  if (fields.length > 0) {
    const named = fields.slice(0, 3).map((field) => `"${field.length > 40 ? `${field.slice(0, 40)}…` : field}"`);
    throw refuse('unknownField', `unknown field${fields.length > 1 ? 's' : ''} ${named.join(', ')}${fields.length > 3 ? ', …' : ''}: ${operation} takes no body`);
  }
  return {};
}
