import { isInteger, parse, stringify } from 'lossless-json';

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

/** The inverse: bigint values are written as plain JSON numbers with every digit. */
export function stringifyExactJson(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError('value has no JSON form');
  return text;
}
