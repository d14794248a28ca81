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

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

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
  // An array by index, no list of its keys made (64 KiB of nested arrays are 30,000 of them): both are dense,
  // the one from JSON and what superjson read from it.
  if (Array.isArray(read)) {
    const list = sent as unknown[];
    if (list.length !== read.length) return [String(Math.min(list.length, read.length))];
    for (let index = 0; index < read.length; index++) {
      const inner = firstDifference(list[index], read[index]);
      if (inner) return [String(index), ...inner];
    }
    return undefined;
  }
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
    // Without annotations nothing is applied, and the value is the JSON itself: no copy at all.
    value = meta === undefined ? json : superjson.deserialize({ json: json === undefined ? json : JSON.parse(JSON.stringify(json)), meta }, { inPlace: true });
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

/** The annotations {@link writeOutput} writes itself, as superjson names them. */
type LeafAnnotation = ['bigint'] | ['undefined'] | ['Date'];

/** A value {@link writeOutput}'s one pass leaves to superjson. */
const NOT_PLAIN = Symbol('not plain');

/** superjson's escaping of a key inside an annotation's path. */
const escapeKey = (key: string) => (key.includes('.') || key.includes('\\') ? key.replace(/\\/g, '\\\\').replace(/\./g, '\\.') : key);

/**
 * `value` as superjson writes it, its annotations added to `values` under their paths (`path` is null at the
 * root, an object or array, since `''` is a key). NOT_PLAIN where superjson's own walker is needed: an object
 * met twice (superjson records the identity), a sparse array, a number JSON lacks, an invalid Date, or
 * anything but plain objects and arrays of JSON values, bigints, Dates and undefined.
 */
function writePlain(value: unknown, path: string | null, values: Record<string, LeafAnnotation>, met: Set<object>): unknown {
  if (isJsonLeaf(value)) return value;
  switch (typeof value) {
    case 'bigint':
      values[path!] = ['bigint'];
      return value.toString();
    case 'undefined':
      values[path!] = ['undefined'];
      return null;
    case 'object': {
      const object = value as object; // null is a JSON leaf, written above
      if (met.has(object)) return NOT_PLAIN;
      met.add(object);
      const prefix = path === null ? '' : `${path}.`;
      if (Array.isArray(value)) {
        const written = new Array<unknown>(value.length);
        for (let index = 0; index < value.length; index++) {
          if (!(index in value)) return NOT_PLAIN;
          const item = writePlain(value[index], `${prefix}${index}`, values, met);
          if (item === NOT_PLAIN) return NOT_PLAIN;
          written[index] = item;
        }
        return written;
      }
      if (value instanceof Date) {
        if (Number.isNaN(value.getTime())) return NOT_PLAIN;
        values[path!] = ['Date'];
        return value.toISOString();
      }
      if (!isPlainObject(object)) return NOT_PLAIN;
      const written: Record<string, unknown> = {};
      for (const key of Object.keys(object)) {
        // superjson refuses these keys (a prototype-pollution guard): its walker throws as it would have.
        if (key === '__proto__' || key === 'constructor' || key === 'prototype') return NOT_PLAIN;
        const field = writePlain((object as Record<string, unknown>)[key], `${prefix}${escapeKey(key)}`, values, met);
        if (field === NOT_PLAIN) return NOT_PLAIN;
        written[key] = field;
      }
      return written;
    }
    default:
      return NOT_PLAIN;
  }
}

/**
 * What the server answers over tRPC, in superjson's format, in one pass. superjson's walker copies the path
 * and the ancestors at every node and re-keys each annotation at every level above it: 10 lists of 1,000
 * plants took it ~60 ms of the main thread, most of such a request's cost (e2e/api/cost.test.ts). This
 * writes the same JSON and the same annotations for the values the procedures return: plain objects and
 * arrays of JSON values, bigints, Dates and undefined; anything else goes to superjson. What differs tells a
 * reader nothing: the annotations' order (superjson's put integer-like keys first at each level; each names
 * its own leaf), and the `referentialEqualities` superjson lists for equal bigints (it takes them for objects
 * met twice, but a bigint has no identity).
 */
export function writeOutput(value: unknown): SuperJSONResult {
  // A root that is not an object or array superjson annotates as a whole (its `values` is then an array).
  if (typeof value !== 'object' || value === null || value instanceof Date) return superjson.serialize(value);
  const values: Record<string, LeafAnnotation> = {};
  const json = writePlain(value, null, values, new Set());
  if (json === NOT_PLAIN) return superjson.serialize(value);
  for (const _ in values) return { json: json as SuperJSONResult['json'], meta: { values, v: 1 } };
  return { json: json as SuperJSONResult['json'] };
}

export const transformer: TRPCCombinedDataTransformer = {
  input: { serialize: (value) => superjson.serialize(value), deserialize: deserializeCanonicalInput },
  output: { serialize: writeOutput, deserialize: (payload) => superjson.deserialize(payload) },
};
