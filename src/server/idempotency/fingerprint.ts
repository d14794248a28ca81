import { createHash } from 'node:crypto';

/**
 * What "the same body" means for an Idempotency-Key: the same JSON value. White space, the order of an
 * object's members, how a string is escaped ("\u0041" is "A") and how a number is spelled (100, 100.0 and
 * 1e2 are one number) do not matter; any other difference does, including Unicode normalization (an "é"
 * written as one code point or as e + U+0301 are different names, and would be stored differently).
 *
 * The REST chain hands bodies over parsed by the exact JSON reader: integers written as integers are
 * bigint, every other number a double. An integral double is written as the integer it is, so 1e2 and 100
 * agree; a non-integral one as JavaScript's shortest round-trip form. (Non-integral numbers are never
 * valid in a create body, so their precision decides nothing but which 400 is replayed.)
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isInteger(value) ? BigInt(value).toString() : String(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const keys = Object.keys(value).sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
    }
    default:
      throw new TypeError(`${typeof value} is not a JSON value`);
  }
}

/** SHA-256 of the operation (`POST /plants`) and the canonical body: equal exactly when both are the same. */
export function requestFingerprint(operation: string, body: unknown): string {
  return createHash('sha256').update(operation).update('\n').update(canonicalJson(body ?? null)).digest('hex');
}
