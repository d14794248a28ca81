import { decodeUtf8 } from '../guards/body';
import { refuse } from '../reply';

import { parseExactJson } from './exact-json';

function describe(body: unknown): string {
  if (body === null) return 'null';
  if (Array.isArray(body)) return 'an array';
  return typeof body === 'bigint' ? 'a number' : `a ${typeof body}`;
}

/** Body bytes as a JSON object with every integer exact (bigint), or a 400 that says what is wrong with them. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  const text = decodeUtf8(bytes);
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    const reason = text.trim() === '' ? 'it is empty' : error instanceof RangeError ? 'it nests too deeply' : (error as Error).message;
    throw refuse('invalidJson', `the body is not valid JSON: ${reason}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refuse('bodyNotObject', `the body must be a JSON object, not ${describe(body)}`);
  return body as Record<string, unknown>;
}
