import type { TRPCCombinedDataTransformer } from '@trpc/server';
import superjson, { type SuperJSONResult } from 'superjson';

import { AppError } from '@/shared/errors';

/**
 * superjson carries bigint ids and Dates exactly over the tRPC door, but its reader is lenient where REST
 * is strict: it hands `" 25 "`, `"0x1A"` and `""` to BigInt (25n, 26n, 0n), and its `referentialEqualities`
 * can copy a value to a path the client never sent. Input must therefore be superjson's own, canonical
 * writing of the value it stands for: what a client writes with `superjson.serialize`, and nothing else.
 * A value that reads back differently names the first place it differs.
 */
function firstDifference(sent: unknown, canonical: unknown, path: string[]): string[] | undefined {
  if (Object.is(sent, canonical)) return undefined;
  if (typeof sent !== 'object' || typeof canonical !== 'object' || sent === null || canonical === null) return path;
  if (Array.isArray(sent) !== Array.isArray(canonical)) return path;
  const sentKeys = Object.keys(sent);
  const canonicalKeys = Object.keys(canonical);
  const extra = canonicalKeys.find((key) => !Object.hasOwn(sent, key)) ?? sentKeys.find((key) => !Object.hasOwn(canonical, key));
  if (extra !== undefined) return [...path, extra];
  for (const key of sentKeys) {
    const difference = firstDifference((sent as Record<string, unknown>)[key], (canonical as Record<string, unknown>)[key], [...path, key]);
    if (difference) return difference;
  }
  return undefined;
}

function valueAt(value: unknown, path: string[]): unknown {
  return path.reduce<unknown>((inner, key) => (typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)[key] : undefined), value);
}

export function deserializeCanonicalInput(payload: unknown): unknown {
  if (typeof payload !== 'object' || payload === null) throw new AppError('invalidJson', 'the input must be a superjson object ({"json": …})');
  let value: unknown;
  try {
    value = superjson.deserialize(payload as SuperJSONResult);
  } catch {
    // superjson fails on unknown types, bigints that are not numbers, and cycles (by overflowing the stack).
    throw new AppError('invalidJson', 'the input is not valid superjson: send what superjson.serialize writes');
  }
  const difference = firstDifference((payload as SuperJSONResult).json, superjson.serialize(value).json, []);
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
