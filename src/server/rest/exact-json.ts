import { isInteger, parse, stringify } from 'lossless-json';

/**
 * JSON that keeps int64 exact. Integer tokens become bigint (9007199254740993 stays itself); other numbers
 * become doubles. Duplicate keys are an error instead of "last one wins", so a body means one thing only.
 */
export function parseExactJson(text: string): unknown {
  return parse(text, null, (token) => (isInteger(token) ? BigInt(token) : Number(token)));
}

/** The inverse: bigint values are written as plain JSON numbers with every digit. */
export function stringifyExactJson(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}
