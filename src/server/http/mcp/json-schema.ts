import { z } from 'zod';

import { AppError } from '@/shared/errors';

/**
 * The MCP door's JSON Schemas, from the procedures' zod schemas, and the values that travel with them.
 *
 * An int64 cannot travel safely as a plain JSON number: most MCP clients and hosts parse and write JSON with
 * JSON.parse and JSON.stringify, which round every integer beyond ±2^53 (9007199254740993 becomes
 * 9007199254740992) before a program sees it, and the server cannot tell a rounded number from a meant one.
 * So on this door an int64 is sent as a string of decimal digits (always exact), or as a JSON integer only
 * within ±(2^53 − 1), where no parser rounds; a JSON integer beyond that is refused rather than trusted.
 * Results carry an int64 as a string in `structuredContent`; the text content has the exact JSON number as
 * well, for clients that parse it losslessly. The schemas say so.
 */

export type JsonSchema = { [keyword: string]: unknown };

/** An int64 as text: decimal digits with an optional minus, at most 19 digits (the procedures check the range). */
// [0-9], not \d: the pattern is sent to clients in the tool's JSON Schema, and in some languages' regular
// expressions (Python's re) \d matches every Unicode digit.
// eslint-disable-next-line regexp/prefer-d
const INT64_TEXT = /^-?[0-9]{1,19}$/;

const INT64_INPUT_NOTE =
  'An int64: send it as a string of decimal digits (always exact), or as a JSON integer within ±9007199254740991 (a larger JSON number may have been rounded on its way, so it is refused).';
const INT64_OUTPUT_NOTE = 'An int64, written as a string of decimal digits so that no JSON parser rounds it.';

/** A text as a sentence, so that texts joined read as sentences. */
export const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The project documents a schema zod cannot describe (a bigint, a preprocessed path value) with
 * `.meta({ override: … })`, the OpenAPI document's convention (zod-openapi). zod's own converter copies
 * metadata as keywords, so the override is applied here the same way: its keywords replace the generated ones.
 */
function applyOverride({ jsonSchema }: { jsonSchema: Record<string, unknown> }): void {
  const { override } = jsonSchema;
  if (!isObject(override)) return;
  delete jsonSchema.override;
  Object.assign(jsonSchema, structuredClone(override));
}

/**
 * zod moves a schema with an `id` (Plant, NewPlant) into `$defs` and refers to it. A tool's input must be an
 * object schema at its root (clients refuse a bare `$ref`), and a model reads a schema best whole, so every
 * reference is replaced by its definition. A definition that refers to itself cannot be inlined: the build
 * of the tool list fails, and names the schema.
 */
function inlineDefinitions(root: JsonSchema): JsonSchema {
  const definitions = isObject(root.$defs) ? root.$defs : {};
  const inline = (node: unknown, within: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => inline(item, within));
    if (!isObject(node)) return node;
    const { $ref, $defs, ...rest } = node;
    const inner = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value, within)]));
    if (typeof $ref !== 'string') return inner;
    const name = $ref.startsWith('#/$defs/') ? $ref.slice('#/$defs/'.length) : undefined;
    if (name === undefined || !Object.hasOwn(definitions, name)) throw new Error(`the schema refers to ${$ref}, which it does not define`);
    if (within.includes(name)) throw new Error(`the schema ${name} refers to itself; an MCP tool schema is inlined whole`);
    return { ...(inline(definitions[name], [...within, name]) as JsonSchema), ...inner };
  };
  return inline(root, []) as JsonSchema;
}

const isInt64Schema = (schema: JsonSchema) => schema.type === 'integer' && schema.format === 'int64';

/** Rewrites each int64 of a converted schema for its direction, and OpenAPI's `example` as JSON Schema's `examples`. */
function rewrite(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((item) => rewrite(item, io));
  if (!isObject(node)) return node;
  const { example, ...rest } = node;
  const schema: JsonSchema = Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, rewrite(value, io)]));
  if (example !== undefined && schema.examples === undefined) schema.examples = [example];
  if (isInt64Schema(schema)) {
    const { type: _integer, format: _int64, ...annotations } = schema;
    const description = [schema.description, io === 'input' ? INT64_INPUT_NOTE : INT64_OUTPUT_NOTE]
      .filter((text): text is string => typeof text === 'string' && text !== '')
      .map(sentence)
      .join(' ');
    const examples = Array.isArray(schema.examples) ? { examples: schema.examples.map(String) } : {};
    const digits = { type: 'string', pattern: INT64_TEXT.source };
    if (io === 'output') return { ...annotations, ...digits, description, ...examples };
    const safeInteger = { type: 'integer', format: 'int64', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    return { ...annotations, anyOf: [safeInteger, digits], description, ...examples };
  }
  // `"type": ["string", "null"]` (zod's nullable without constraints) as one branch per type: the same
  // schema, in the form hosts that map tool schemas onto a one-type dialect (Gemini's) can read.
  if (Array.isArray(schema.type) && schema.anyOf === undefined) {
    const { type, ...others } = schema;
    return { ...others, anyOf: type.map((single) => ({ type: single })) };
  }
  return schema;
}

/**
 * A procedure's zod schema as a tool's JSON Schema (2020-12, MCP's dialect): zod 4's converter on the side
 * the caller meets (`io`: what a caller sends, or what a result holds), the documentation overrides
 * applied, references inlined, int64 rewritten for this door.
 */
export function toolSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any', override: applyOverride }) as JsonSchema;
  const { $schema: _dialect, ...rest } = converted;
  return rewrite(inlineDefinitions(rest), io) as JsonSchema;
}

/** Whether a value at this schema is an int64 (also as one branch of a nullable or optional union). */
function holdsInt64(schema: JsonSchema): boolean {
  if (schema.format === 'int64') return true;
  const branches = [schema.anyOf, schema.oneOf].flatMap((list) => (Array.isArray(list) ? list : []));
  return branches.some((branch) => isObject(branch) && holdsInt64(branch));
}

/** The schema of an object's member or an array's items, looked through unions; `{}` when the schema says nothing. */
function innerSchema(schema: JsonSchema, key: string | null): JsonSchema {
  const candidates = [schema, ...[schema.anyOf, schema.oneOf].flatMap((list) => (Array.isArray(list) ? list : []))].filter(isObject);
  for (const candidate of candidates) {
    if (key === null && isObject(candidate.items)) return candidate.items;
    if (key !== null && isObject(candidate.properties) && Object.hasOwn(candidate.properties, key)) {
      const member = candidate.properties[key];
      if (isObject(member)) return member;
    }
  }
  return {};
}

/**
 * A tool's arguments, parsed losslessly (every JSON integer a bigint), as the procedure takes them, guided by
 * the tool's input schema: an int64 becomes a bigint from its decimal digits, or from a JSON integer within
 * ±(2^53 − 1) (a larger one is refused: 40003, naming the field); any other integer becomes a number when a
 * double holds it exactly (else it stays a bigint, which the procedure refuses as the wrong type rather than
 * reading a rounded value). Everything else is left for the procedure to judge.
 */
export function exactArguments(value: unknown, schema: JsonSchema, path: readonly string[] = []): unknown {
  if (holdsInt64(schema)) {
    if (typeof value === 'string') return INT64_TEXT.test(value) ? BigInt(value) : value;
    if (typeof value !== 'bigint' || Number.isSafeInteger(Number(value))) return value;
    const field = path.join('.');
    throw new AppError(
      'wrongType',
      `${field} is a JSON number beyond ±9007199254740991, which may have been rounded on its way: send it as a string of digits`,
      field,
    );
  }
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  // A container where the schema wants none (arrays nested to the body limit where a text is expected) is left
  // as it came, unwalked: the procedure refuses it at its first level, so its size costs its parse and no more.
  if (Array.isArray(value)) return admits(schema, 'array') ? value.map((item, index) => exactArguments(item, innerSchema(schema, null), [...path, String(index)])) : value;
  if (!isObject(value) || !admits(schema, 'object')) return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, exactArguments(member, innerSchema(schema, key), [...path, key])]));
}

/** Whether a value of this JSON type may stand where `schema` is: its type says so, a branch does, or the schema says nothing of types. */
function admits(schema: JsonSchema, type: 'array' | 'object'): boolean {
  const branches = [schema.anyOf, schema.oneOf, schema.allOf].flatMap((list) => (Array.isArray(list) ? list : [])).filter(isObject);
  if (schema.type === undefined && branches.length === 0) return true;
  if (schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type))) return true;
  return branches.some((branch) => admits(branch, type));
}

/** A procedure's result as `structuredContent` holds it: every int64 (bigint) as its decimal digits. */
export function int64AsText(value: unknown): unknown {
  if (typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map(int64AsText);
  if (!isObject(value) || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, int64AsText(member)]));
}

/**
 * A next page's query as the procedure left it for the REST door's `Link` (text values), as arguments of
 * the same tool: integers as numbers, int64 as their digits (which the input schema takes), the rest as text.
 */
export function queryAsArguments(query: Record<string, string>, inputSchema: JsonSchema): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(query).map(([key, text]) => {
      const schema = innerSchema(inputSchema, key);
      const integer = !holdsInt64(schema) && schema.type === 'integer' && /^-?\d+$/.test(text);
      return [key, integer ? Number(text) : text];
    }),
  );
}
