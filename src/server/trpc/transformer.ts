import type { TRPCCombinedDataTransformer } from '@trpc/server';
import superjson, { type SuperJSONResult } from 'superjson';

import { AppError } from '@/shared/errors';

/**
 * superjson carries bigint ids and Dates exactly over the tRPC door, but its reader is lenient where REST
 * is strict: it hands `" 25 "`, `"0x1A"` and `""` to BigInt (25n, 26n, 0n), and its `referentialEqualities`
 * can copy a value to a path the client never sent. Input must therefore be superjson's own, canonical
 * writing of the value it stands for: what a client writes with `superjson.serialize`, and nothing else.
 * A value that reads back differently names the first place it differs.
 *
 * The check walks what was sent and what superjson read from it in step, once, stopping at the first
 * difference. It used to compare with `superjson.serialize` of the value read, whose walker costs ~10 µs a
 * node and copies the path at each level: a 64 KiB input of 21,000 empty arrays took ~75 ms of CPU, and
 * deep nesting grew with the square of the depth (the front now bounds that at 32 levels, too).
 */
function isJsonLeaf(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'boolean' || value === null || (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0));
}

/** Leaves superjson writes as text with an annotation: bigint, Date, undefined and the numbers JSON lacks. */
function isTextLeaf(value: unknown): boolean {
  return typeof value === 'bigint' || typeof value === 'number' || value === undefined || value instanceof Date;
}

const isPlainObject = (value: object) => [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * Where `sent` (the json a client sent) differs from what superjson writes for `read` (what it read from it),
 * as a path; undefined when it is superjson's own writing. What JSON has is written as it is; a text leaf as
 * superjson writes that leaf alone (cheap); anything else superjson can read (Map, Set, RegExp, Error,
 * classes) no input takes, and counts as a difference.
 */
function firstDifference(sent: unknown, read: unknown): string[] | undefined {
  if (isJsonLeaf(read)) return Object.is(sent, read) ? undefined : [];
  if (isTextLeaf(read)) return sent === superjson.serialize(read).json ? undefined : [];
  if (typeof read !== 'object' || read === null || typeof sent !== 'object' || sent === null) return [];
  if (!(Array.isArray(read) || isPlainObject(read)) || Array.isArray(read) !== Array.isArray(sent)) return [];
  const readKeys = Object.keys(read);
  const sentKeys = Object.keys(sent);
  const extra = readKeys.length === sentKeys.length ? undefined : (readKeys.find((key) => !Object.hasOwn(sent, key)) ?? sentKeys.find((key) => !Object.hasOwn(read, key)));
  if (extra !== undefined) return [extra];
  for (const key of sentKeys) {
    if (!Object.hasOwn(read, key)) return [key];
    const inner = firstDifference((sent as Record<string, unknown>)[key], (read as Record<string, unknown>)[key]);
    if (inner) return [key, ...inner];
  }
  return undefined;
}

function valueAt(value: unknown, path: string[]): unknown {
  return path.reduce<unknown>((inner, key) => (typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)[key] : undefined), value);
}

export function deserializeCanonicalInput(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null) throw new AppError('invalidJson', 'the input must be a superjson object ({"json": …})');
  const { json, meta } = payload as SuperJSONResult;
  let value: unknown;
  try {
    // superjson copies the input before it applies its annotations, with a generic deep copy that costs
    // ~1 µs a node; the input came from JSON, so JSON's own round trip copies it exactly, ten times faster.
    value = superjson.deserialize({ json: json === undefined ? json : JSON.parse(JSON.stringify(json)), meta }, { inPlace: true });
  } catch {
    // superjson fails on unknown types, bigints that are not numbers, and cycles (by overflowing the stack).
    throw new AppError('invalidJson', 'the input is not valid superjson: send what superjson.serialize writes');
  }
  const difference = firstDifference(json, value);
  if (difference === undefined) return value;
  const field = difference.join('.');
  const read = valueAt(value, difference);
  throw typeof read === 'bigint'
    ? new AppError('wrongType', `${field} must be an integer written in decimal digits`, field)
    : new AppError('invalidJson', `the input is not valid superjson at ${field || 'its top level'}`, field || undefined);
}

export const transformer: TRPCCombinedDataTransformer = {
  input: { serialize: (value) => superjson.serialize(value), deserialize: deserializeCanonicalInput },
  output: { serialize: (value) => superjson.serialize(value), deserialize: (payload) => superjson.deserialize(payload) },
};
