import { createHash } from 'node:crypto';

/**
 * What "the same body" means for an Idempotency-Key: the same value as the operation reads it. White space,
 * the order of an object's members and how a string is escaped ("\u0041" is "A") do not matter; any other
 * difference does, including Unicode normalization (an "é" written as one code point or as e + U+0301 are
 * different names, and would be stored differently).
 *
 * Numbers are read as the REST chain's exact JSON reader reads them: a number written in digits alone is an
 * integer (bigint), one with a fraction or an exponent a double. The operation tells the two apart (`5002.0`
 * is not an id: 400), so the fingerprint does too, or a retry with `5002.0` would be handed the 200 kept for
 * `5002`. An integral double is written with `.0` (100.0 and 1e2 are one double, and not 100); a
 * non-integral one as JavaScript's shortest round-trip form, which always has a `.` or an exponent.
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isInteger(value) ? `${BigInt(value)}.0` : String(value);
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
