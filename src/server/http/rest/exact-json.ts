import { isInteger, isLosslessNumber, parse } from 'lossless-json';

import { quoteName } from '@/shared/messages';

/**
 * Throws on an object key given twice. lossless-json only objects when the two values differ; a body
 * that names a field twice is ambiguous either way (RFC 8259 §4), so this refuses it outright. Runs on
 * text that has already parsed, so it only has to tell keys from strings and track nesting.
 */
function refuseDuplicateKeys(text: string): void {
  const scopes: (Set<string> | null)[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '{') scopes.push(new Set());
    else if (char === '[') scopes.push(null);
    else if (char === '}' || char === ']') scopes.pop();
    else if (char === '"') {
      const start = index;
      for (index++; text[index] !== '"'; index++) if (text[index] === '\\') index++;
      const keys = scopes.at(-1);
      if (!keys) continue;
      let next = index + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text[next] !== ':') continue;
      const key = JSON.parse(text.slice(start, index + 1)) as string;
      if (keys.has(key)) throw new SyntaxError(`the key ${quoteName(key)} is given twice`);
      keys.add(key);
    }
  }
}

/**
 * JSON that keeps int64 exact. Integer tokens become bigint (9007199254740993 stays itself); other numbers
 * become doubles. A key given twice is an error, even with equal values, so a body means one thing only.
 */
export function parseExactJson(text: string): unknown {
  const value = parse(text, null, (token) => (isInteger(token) ? BigInt(token) : Number(token)));
  refuseDuplicateKeys(text);
  return value;
}

/**
 * A string JSON.stringify writes as it is, between quotes: no quote, backslash, control character or surrogate
 * (it escapes a lone surrogate; a pair is left to it too, for simplicity).
 */
// eslint-disable-next-line no-control-regex -- the control characters are what JSON.stringify escapes
const WRITTEN_AS_IS = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

const quoted = (text: string): string => (WRITTEN_AS_IS.test(text) ? `"${text}"` : JSON.stringify(text));

/**
 * The inverse: bigint values are written as plain JSON numbers with every digit. Byte for byte what
 * lossless-json's `stringify` writes (the same steps in the same order: dates, booleans, numbers and boxed
 * values by JSON.stringify, an object's `toJSON()` called with no argument and never an array's, members
 * without a JSON form left out of objects and written `null` in arrays), in about three quarters of its time:
 * a string or key that needs no escaping is written between quotes without a call to JSON.stringify, and
 * none of lossless-json's options (replacer, indentation, number stringifiers) is looked at per value.
 * `exact-json.test.ts` compares the two on generated values.
 */
export function stringifyExactJson(value: unknown): string {
  const text = writeValue(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}

function writeValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'bigint':
      return value.toString();
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      if (value === null) return 'null';
      if (value instanceof Date || value instanceof Boolean || value instanceof Number || value instanceof String) return JSON.stringify(value);
      if (isLosslessNumber(value)) return value.toString();
      return Array.isArray(value) ? writeArray(value) : writeObject(value as Record<string, unknown>);
    default:
      return undefined;
  }
}

function writeArray(array: readonly unknown[]): string {
  let text = '[';
  for (let index = 0; index < array.length; index++) {
    text += `${index === 0 ? '' : ','}${writeValue(array[index]) ?? 'null'}`;
  }
  return `${text}]`;
}

function writeObject(object: Record<string, unknown>): string | undefined {
  if (typeof object.toJSON === 'function') return writeValue((object.toJSON as () => unknown)());
  let text = '{';
  for (const key of Object.keys(object)) {
    const written = writeValue(object[key]);
    if (written === undefined) continue;
    text += `${text.length === 1 ? '' : ','}${quoted(key)}:${written}`;
  }
  return `${text}}`;
}
