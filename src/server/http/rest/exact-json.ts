import { isInteger, isLosslessNumber, parse, stringify } from 'lossless-json';

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

/** The largest integer a double holds exactly, and so writes with the same digits as the bigint. */
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Thrown by `withSafeNumbers` where only lossless-json's writer gives the right digits. */
const NEEDS_LOSSLESS = Symbol('needs lossless-json');

/**
 * A copy of `value` for `JSON.stringify` that writes what lossless-json's `stringify` writes: every bigint
 * within ±(2^53 − 1) a number (a double holds it exactly, and writes the same digits), objects copied by
 * `Object.keys` with their `toJSON()` called as lossless-json calls it (no argument, never an array's),
 * arrays copied by index, and everything `JSON.stringify` writes as lossless-json does (strings, numbers,
 * booleans, null, dates, boxed values, undefined and functions left out) passed as it is. A bigint beyond
 * that range or a LosslessNumber throws NEEDS_LOSSLESS.
 */
function withSafeNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') {
    if (value > SAFE || value < -SAFE) throw NEEDS_LOSSLESS;
    return Number(value);
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) copy[index] = withSafeNumbers(value[index]);
    return copy;
  }
  if (value instanceof Date || value instanceof Boolean || value instanceof Number || value instanceof String) return value;
  if (isLosslessNumber(value)) throw NEEDS_LOSSLESS;
  const object = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof object.toJSON === 'function') return withSafeNumbers((object.toJSON as () => unknown)());
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const item = withSafeNumbers(object[key]);
    // An own "__proto__" (JSON.parse makes one) set by assignment would replace the copy's prototype instead.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy;
}

/**
 * The inverse: bigint values are written as plain JSON numbers with every digit. Byte for byte what
 * lossless-json's `stringify` writes, in half its time: V8's own `JSON.stringify` writes a copy whose ids are
 * doubles, since every id up to 2^53 − 1 is one exactly; a value holding a larger integer (rare: ids count
 * up from 1) is written by lossless-json itself. `exact-json.test.ts` compares the two on generated values.
 */
export function stringifyExactJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(withSafeNumbers(value));
  } catch (error) {
    if (error !== NEEDS_LOSSLESS) throw error;
    text = stringify(value);
  }
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}
