import type { CallToolResult, Tool, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { AnyTRPCRouter } from '@trpc/server';
import type { OpenApiMethod } from 'trpc-to-openapi';
import type { z } from 'zod';

import { type Actor, can, type Permission } from '@/server/auth/permissions';
import { stringifyExactJson } from '@/server/http/rest/exact-json';
import { INTERNAL_ERROR_MESSAGE, problemFromError } from '@/server/problems';
import { createProcedureCaller, type ProcedureRef } from '@/server/trpc/call';
import { type Context, type ProcedureMeta } from '@/server/trpc/init';
import { errorCatalog, type ErrorKind, type ErrorMap } from '@/shared/errors';

import { exactArguments, int64AsText, type JsonSchema, queryAsArguments, sentence, toolSchema } from './json-schema';

type ProcedureDef = { type: ProcedureRef['type']; meta?: ProcedureMeta; inputs: z.ZodType[]; output?: z.ZodType };

/**
 * What a tool's result looks like in `structuredContent`, which MCP requires to be an object: an object
 * result as it is; a list as `{items, next?}` (`next`: the arguments of the following page, when the
 * procedure says there is one); any other value as `{result}`; nothing for a procedure without a result.
 */
type ResultShape = 'object' | 'list' | 'value' | 'none';

type ToolEntry = { tool: Tool; procedure: ProcedureRef; permission?: Permission; inputSchema: JsonSchema; shape: ResultShape };

/** MCP's rule for a tool name (2025-11-25: 1 to 128 of these characters). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** `plants.create` → `plants_create`, `webhooks.rotateSecret` → `webhooks_rotate_secret`. */
export function toolName(procedurePath: string): string {
  return procedurePath
    .split('.')
    .map((segment) => segment.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`))
    .join('_');
}

/**
 * Hints for the host (which may ask a person before a destructive call), from the operation's HTTP method:
 * what REST promises for a method is what the tool does.
 */
const annotationsByMethod: Record<OpenApiMethod, ToolAnnotations> = {
  GET: { readOnlyHint: true },
  POST: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  PUT: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  PATCH: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  DELETE: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
};

const NEXT_PAGE_NOTE = 'Present when more results follow: call this tool again with exactly these arguments for the next page.';

function inputSchemaOf(path: string, inputs: z.ZodType[]): JsonSchema {
  const schemas = inputs.map((input) => toolSchema(input, 'input'));
  if (schemas.some((schema) => schema.type !== 'object')) throw new Error(`procedure ${path}: an MCP tool takes an object, and its input is not one`);
  if (schemas.length === 0) return { type: 'object', properties: {} };
  return schemas.length === 1 ? schemas[0]! : { type: 'object', allOf: schemas };
}

function resultOf(output: z.ZodType | undefined, inputSchema: JsonSchema): { shape: ResultShape; outputSchema?: JsonSchema } {
  const kind = (output as { _zod?: { def: { type: string } } } | undefined)?._zod?.def.type;
  if (kind === 'void' || kind === 'undefined') return { shape: 'none' };
  const schema = output ? toolSchema(output, 'output') : {};
  if (schema.type === 'object') return { shape: 'object', outputSchema: schema };
  const wrapped = (name: string, extra: Record<string, JsonSchema> = {}) => ({
    type: 'object',
    properties: { [name]: schema, ...extra },
    required: [name],
    additionalProperties: false,
  });
  if (schema.type === 'array') return { shape: 'list', outputSchema: wrapped('items', { next: { ...inputSchema, description: NEXT_PAGE_NOTE } }) };
  return { shape: 'value', outputSchema: wrapped('result') };
}

/**
 * The failures a procedure declares (its error map), as a model choosing the tool reads them: each error value
 * with when this procedure answers it, or else the catalogue's meaning. Those every call can meet (no token, the
 * rate limit, a malformed argument) are said once, in the server's instructions.
 */
function errorsDescription(errors: ErrorMap | undefined): string[] {
  const entries = Object.entries(errors ?? {}) as [ErrorKind, true | string][];
  if (entries.length === 0) return [];
  const each = entries.map(([kind, when]) => (when === true ? `${errorCatalog[kind].value}: ${errorCatalog[kind].meaning}` : sentence(`${errorCatalog[kind].value} ${when}`)));
  return [`Errors of its own: ${each.join(' ')}`];
}

export type ToolCatalog = {
  /** The tools this actor may call, as `tools/list` answers them. */
  listFor(actor: Actor): Tool[];
  /** Runs a tool for the request's context; undefined when no tool has this name. */
  call(name: string, args: Record<string, unknown>, context: Context): Promise<CallToolResult | undefined>;
};

/**
 * The MCP tools of a router: one per public procedure (one with OpenAPI metadata, like the REST operations),
 * named from its path, described from its metadata (`mcp.description`, written for a model, or else the
 * OpenAPI summary and texts), with input and output schemas from its zod schemas. Built once per process.
 * A call goes through tRPC's procedure call with the request's context, as the REST door's do
 * (trpc/call.ts), so the procedure's own access rules, validation and errors apply exactly as on the other
 * doors; `onFault` hears of a server fault.
 */
export function buildToolCatalog(router: AnyTRPCRouter, options: { onFault: (error: unknown, context: Context) => void }): ToolCatalog {
  const callProcedure = createProcedureCaller(router);
  const entries = new Map<string, ToolEntry>();
  for (const [path, procedure] of Object.entries(router._def.procedures as Record<string, { _def: ProcedureDef }>)) {
    const { meta, inputs, output } = procedure._def;
    const openapi = meta?.openapi;
    // A file streamed as it is made is no tool result (one JSON message): REST and tRPC serve it.
    if (!openapi || openapi.enabled === false || meta.file !== undefined) continue;
    const name = toolName(path);
    if (!TOOL_NAME.test(name)) throw new Error(`procedure ${path}: "${name}" is not a valid MCP tool name`);
    if (entries.has(name)) throw new Error(`procedure ${path}: another procedure already has the tool name "${name}"`);
    const inputSchema = inputSchemaOf(path, inputs);
    const { shape, outputSchema } = resultOf(output, inputSchema);
    const description = [
      meta.mcp?.description ??
        [openapi.summary, openapi.description, shape !== 'none' && openapi.successDescription ? `Returns: ${openapi.successDescription}` : undefined]
          .filter((text): text is string => Boolean(text))
          .map(sentence)
          .join(' '),
      ...errorsDescription(meta.errors),
    ].join(' ');
    const tool: Tool = {
      name,
      ...(openapi.summary ? { title: openapi.summary } : {}),
      description,
      inputSchema: inputSchema as Tool['inputSchema'],
      ...(outputSchema ? { outputSchema: outputSchema as Tool['outputSchema'] } : {}),
      annotations: annotationsByMethod[openapi.method],
    };
    entries.set(name, { tool, procedure: { path, type: procedure._def.type }, permission: meta.permission, inputSchema, shape });
  }

  function succeeded(entry: ToolEntry, output: unknown, context: Context): CallToolResult {
    if (entry.shape === 'none') return { content: [{ type: 'text', text: 'Done. (This tool has no result.)' }] };
    const next = context.responseHints.nextPageQuery;
    const value =
      entry.shape === 'list'
        ? { items: output, ...(next ? { next: queryAsArguments(next, entry.inputSchema) } : {}) }
        : entry.shape === 'value'
          ? { result: output }
          : output;
    return { content: [{ type: 'text', text: stringifyExactJson(value) }], structuredContent: int64AsText(value) as Record<string, unknown> };
  }

  /** The catalogue's `{error, message}`, as the REST door writes it; a fault says only the request id. */
  function failed(error: unknown, input: unknown, context: Context): CallToolResult {
    const problem = problemFromError(error, input);
    if (problem.kind === 'internal') options.onFault(error, context);
    const message = problem.kind === 'internal' ? `${INTERNAL_ERROR_MESSAGE} (request id ${context.requestId})` : problem.message;
    return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: errorCatalog[problem.kind].value, message }) }] };
  }

  return {
    listFor: (actor) => [...entries.values()].filter((entry) => !entry.permission || can(actor, entry.permission)).map((entry) => entry.tool),

    async call(name, args, context) {
      const entry = entries.get(name);
      if (!entry) return undefined;
      let input: unknown = args;
      try {
        input = exactArguments(args, entry.inputSchema);
        return succeeded(entry, await callProcedure(entry.procedure, input, context), context);
      } catch (error) {
        return failed(error, input, context);
      }
    },
  };
}
