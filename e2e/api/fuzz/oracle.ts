/**
 * The fuzz run's oracle: the contract's rules for a plant and a list query, written from the contract
 * (not from the server's code), so a generated request can be judged before its answer is read. Its numbers
 * are the contract's named limits (src/shared/limits.ts), read from the one place that declares them.
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

/** name/tag rules: 'either' when the text has a lone surrogate (not Unicode text; the contract is silent). */
export function textRule(value: string, max: number, _notOnlyWhiteSpace: boolean): Expectation {
  const ok = codePoints(value) >= 1 && codePoints(value) <= max && !/\p{Cc}/u.test(value) && hasVisible(value);
  if (!ok) return 'refused';
  return hasLoneSurrogate(value) ? 'either' : 'ok';
}

export const combine = (parts: Expectation[]): Expectation => (parts.includes('refused') ? 'refused' : parts.includes('either') ? 'either' : 'ok');

/** Whether a plant read back from the store keeps the Plant rules. */
export function plantProblems(plant: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const keys = Object.keys(plant).sort();
  if (!(keys.join() === 'id,name' || keys.join() === 'id,name,tag')) problems.push(`keys ${keys.join(',')}`);
  if (typeof plant.id !== 'bigint' || plant.id < INT64_MIN || plant.id > INT64_MAX) problems.push(`id ${String(plant.id)}`);
  const name = plant.name;
  if (typeof name !== 'string' || textRule(name, 200, true) === 'refused' || hasLoneSurrogate(name)) problems.push(`name ${JSON.stringify(name)} (${typeof name === 'string' ? codePoints(name) : '?'} code points)`);
  if ('tag' in plant) {
    const tag = plant.tag;
    if (typeof tag !== 'string' || textRule(tag, 100, false) === 'refused' || hasLoneSurrogate(tag)) problems.push(`tag ${JSON.stringify(tag)}`);
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
