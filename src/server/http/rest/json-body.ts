import type { ServerResponse } from 'node:http';

import { decodeUtf8, readBody } from '../guards/body';
import { refuseDeepJson } from '../guards/json-depth';
import type { FrontRequest } from '../request';
import { refuse } from '../reply';

import { parseExactJson } from './exact-json';

function describe(body: unknown): string {
  if (body === null) return 'null';
  if (Array.isArray(body)) return 'an array';
  return typeof body === 'bigint' ? 'a number' : `a ${typeof body}`;
}

/**
 * The body as a JSON object with every integer exact (bigint), or a 400 that says what is wrong with it.
 * `charge` is told the body's size once it is read, before anything parses it (it may refuse with a 429).
 */
export async function readJsonObject(request: FrontRequest, response: ServerResponse, charge: (bytes: number) => void): Promise<Record<string, unknown>> {
  const bytes = await readBody(request, response);
  charge(bytes.byteLength);
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
