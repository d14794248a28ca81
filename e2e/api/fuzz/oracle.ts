/**
 * The fuzz run's oracle: the contract's rules for a plant and a list query, written from the contract
 * (not from the server's code), so a generated request can be judged before its answer is read. Its numbers
 * are the contract's named limits (src/shared/limits.ts), read from the one place that declares them, and the
 * plant's fields are the served document's (`textFieldsOf`): every field but the id is text, judged by the
 * contract's one rule for text with the field's own length.
 */
import { BODY_LIMIT_BYTES } from '@/shared/limits';

/** What the contract says of a request: answered 2xx, refused, or it is silent. */
export type Expectation = 'ok' | 'refused' | 'either';
export type Json = Record<string, unknown>;

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;
export const INT32 = 2 ** 31;
export const BODY_LIMIT = BODY_LIMIT_BYTES;

export const codePoints = (text: string) => [...text].length;
export const isUtf8 = (bytes: Buffer) => {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
};
export const hasLoneSurrogate = (text: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

/**
 * The contract's "at least one visible character" (name and tag, since 1.1.0): not only white space,
 * format controls and the other invisible characters it names (U+200B, U+2060, U+3164, U+2800, U+180E),
 * combining marks without a character to modify, and noncharacters (U+FFFF, U+FDD0, …).
 */
export const hasVisible = (text: string) => text.replace(/[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cf}\u2800\p{M}\p{Noncharacter_Code_Point}]/gu, '') !== '';

/** A text field's rule: 'either' when the text has a lone surrogate (not Unicode text; the contract is silent). */
export function textRule(value: string, max: number): Expectation {
  const ok = codePoints(value) >= 1 && codePoints(value) <= max && !/\p{Cc}/u.test(value) && hasVisible(value);
  if (!ok) return 'refused';
  return hasLoneSurrogate(value) ? 'either' : 'ok';
}

export const combine = (parts: Expectation[]): Expectation => (parts.includes('refused') ? 'refused' : parts.includes('either') ? 'either' : 'ok');

/** A plant's field besides the id, as the document declares it: text of at most `maxLength` characters. */
export type TextField = { name: string; optional: boolean; maxLength: number };

/** The NewPlant schema's fields besides the id, in its order; a field of another kind the oracle has no rule for. */
export function textFieldsOf(schema: { properties: Record<string, { type?: string; maxLength?: number }>; required: string[] }): TextField[] {
  return Object.entries(schema.properties)
    .filter(([name]) => name !== 'id')
    .map(([name, property]) => {
      if (property.type !== 'string' || typeof property.maxLength !== 'number') throw new Error(`NewPlant's ${name} is not text with a maxLength: the fuzz oracle has no rule for it`);
      return { name, optional: !schema.required.includes(name), maxLength: property.maxLength };
    });
}

/** Whether a plant read back from the store keeps the Plant rules: an int64 id, each field's text rule, no other member. */
export function plantProblems(plant: Record<string, unknown>, fields: readonly TextField[]): string[] {
  const problems: string[] = [];
  const unknown = Object.keys(plant).filter((key) => key !== 'id' && !fields.some((field) => field.name === key));
  if (unknown.length > 0) problems.push(`keys ${unknown.join(',')}`);
  if (typeof plant.id !== 'bigint' || plant.id < INT64_MIN || plant.id > INT64_MAX) problems.push(`id ${String(plant.id)}`);
  for (const { name, optional, maxLength } of fields) {
    if (optional && !(name in plant)) continue;
    const value = plant[name];
    if (typeof value !== 'string' || textRule(value, maxLength) === 'refused' || hasLoneSurrogate(value)) {
      problems.push(`${name} ${JSON.stringify(value)} (${typeof value === 'string' ? codePoints(value) : '?'} code points)`);
    }
  }
  return problems;
}

/** The contract's rule for a list query: 'ok' when limit and after are absent or valid and given once. */
export function queryRule(query: string): Expectation {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return 'either';
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(query)) return 'either';
  const limits = params.getAll('limit');
  const afters = params.getAll('after');
  if (limits.length > 1 || afters.length > 1) return 'refused';
  const decimal = /^-?\d{1,20}$/;
  if (limits.length === 1 && !(decimal.test(limits[0]!) && Number(limits[0]) >= 1 && Number(limits[0]) <= 1_000)) return 'refused';
  if (afters.length === 1 && !(decimal.test(afters[0]!) && BigInt(afters[0]!) >= INT64_MIN && BigInt(afters[0]!) <= INT64_MAX)) return 'refused';
  return 'ok';
}
