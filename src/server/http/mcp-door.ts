import type { ServerResponse } from 'node:http';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { AnyTRPCRouter } from '@trpc/server';
import type { z } from 'zod';

import type { Logger } from '@/server/log';
import { buildToolCatalog } from '@/server/http/mcp/tools';
import { INTERNAL_ERROR_MESSAGE } from '@/server/problems';
import { contextFor } from '@/server/trpc/init';
import { errorCatalog } from '@/shared/errors';
import { bodyUnits, JSON_MAX_DEPTH, MCP_REQUEST_UNITS } from '@/shared/limits';

import { type Authenticate, requireToken } from './guards/auth';
import { decodeUtf8, readBody } from './guards/body';
import { nestsDeeperThan } from './guards/json-depth';
import type { WaitForTurn } from './guards/work-queue';
import { type FrontRequest, noteCharged, notingCharges, PLACEHOLDER_ORIGIN } from './request';
import { jsonReply, noSuchPath, problemReply, type Reply, Refusal, refuse, writeReply } from './reply';
import { checkContentType } from './rest/content-type';
import { corsHeaders, type CorsOrigins } from './rest/cors';
import { parseExactJson } from './rest/exact-json';
import { API_VERSION } from './rest/openapi';

export const MCP_PATH = '/api/mcp';
const ALLOW = 'POST, OPTIONS';

/** What a model is told about this server when a client connects (MCP's `instructions`). */
const INSTRUCTIONS = [
  'Plant Store: a plant catalogue. Each tool is one operation of its REST API, with the same rules and access: you see and change only what your token may.',
  'Ids are int64. Send an id as a string of digits, which is always exact (a JSON integer is taken only within ±9007199254740991); results carry ids as strings in structuredContent (the text content has the exact number).',
  'A list result is {"items": [...], "next": {...}}; when "next" is present, call the same tool with exactly those arguments for the following page.',
  'A failed call has isError and a text content {"error": <code>, "message": <what to change>}.',
  `Any tool can fail with ${errorCatalog.missingToken.value} or ${errorCatalog.invalidToken.value} (the token), ${errorCatalog.tooManyRequests.value} (too many requests: wait and call again), ${errorCatalog.missingField.value} to ${errorCatalog.unknownField.value} (an argument it refuses: the message names it) or ${errorCatalog.internal.value} (the server failed); a tool's description names the other errors it can answer.`,
].join(' ');

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const shown = (text: string, length = 100) => (text.length > length ? `${text.slice(0, length)}…` : text);

/** A JSON-RPC error for a message the door cannot take (`id` null: it could not be read from the message). */
function rpcError(status: number, code: number, message: string): Reply {
  return jsonReply(status, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const { protocol, hostname } = new URL(origin);
    return (protocol === 'http:' || protocol === 'https:') && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
  } catch {
    return false;
  }
}

/** Thrown while the message is read: the door answers it as a JSON-RPC error. */
class RpcRefusal extends Error {
  constructor(
    readonly reply: Reply,
  ) {
    super('JSON-RPC refusal');
  }
}

/**
 * A JSON-RPC error raised inside a request handler: the SDK sends its code and message as they are (its own
 * McpError would put "MCP error -32602:" in front of the message, which clients then repeat).
 */
class ProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const parseError = (message: string) => new RpcRefusal(rpcError(400, ErrorCode.ParseError, `Parse error: ${message}`));
const invalidRequest = (message: string) => new RpcRefusal(rpcError(400, ErrorCode.InvalidRequest, `Invalid Request: ${message}`));

/** Every integer as a number, which the SDK's schemas and its JSON.stringify take; one a double cannot hold is refused. */
function plainNumbers(value: unknown): unknown {
  if (typeof value === 'bigint') {
    if (!Number.isSafeInteger(Number(value))) {
      throw invalidRequest(
        `the number ${shown(String(value), 40)} does not fit a double exactly; outside a tool's arguments (the JSON-RPC id, _meta) send it as a string`,
      );
    }
    return Number(value);
  }
  if (Array.isArray(value)) return value.map(plainNumbers);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plainNumbers(member)]));
}

/**
 * The requests this server answers, with the SDK's own schemas for them. The SDK checks a request against
 * its schema only inside the handler, and answers a mismatch as an internal error (-32603) whose message
 * is the validator's dump; the door checks first and answers invalid params (-32602) in a sentence.
 */
const requestSchemas = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
]);

const kinds: Record<string, string> = { string: 'a string', object: 'an object', record: 'an object', number: 'a number', array: 'an array', boolean: 'true or false' };

/** A validation issue of the SDK's schemas as a sentence that names the member (no validator wording). */
function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.map(String).join('.') || 'the request';
  if (issue.code === 'invalid_type') return `${where} must be ${kinds[issue.expected] ?? issue.expected}`;
  if (issue.code === 'unrecognized_keys') return `${where} has an unknown member "${shown(issue.keys[0] ?? '', 64)}"`;
  return `${where} is not valid`;
}

type Message = {
  /** The message as the SDK gets it: plain numbers, checked against the SDK's schemas. */
  message: Record<string, unknown>;
  /** A tool call's arguments as parsed, every integer exact and every member kept (the SDK's copy drops `__proto__`). */
  args: Record<string, unknown>;
};

/**
 * One JSON-RPC message from the body, read losslessly. A tool's arguments keep every integer exact (bigint)
 * for the tool to convert by its schema; the rest of the message takes plain numbers.
 */
function readMessage(text: string): Message {
  // Everything behind the door walks a message recursively (the lossless parser, the SDK's schemas, the
  // argument conversion, zod): deeper text is refused from one linear scan before any of them runs.
  if (nestsDeeperThan(text, JSON_MAX_DEPTH)) throw parseError(`the body nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep`);
  let body: unknown;
  try {
    body = parseExactJson(text);
  } catch (error) {
    throw parseError(text.trim() === '' ? 'the body is empty' : `the body is not valid JSON: ${shown((error as Error).message)}`);
  }
  if (Array.isArray(body)) {
    throw invalidRequest('JSON-RPC batches are not accepted (MCP removed them in its 2025-06-18 revision); send one message per request');
  }
  if (!isObject(body)) throw invalidRequest('the body must be one JSON-RPC message, a JSON object');
  const params = body.params;
  const call = body.method === 'tools/call' && isObject(params);
  // A tool runs at once, never as a task: this server declares no tasks capability, and MCP asks a
  // server without it to ignore the task member.
  const { arguments: args, task: _task, ...rest } = call ? params : {};
  const message = plainNumbers(call ? { ...body, params: rest } : body) as Record<string, unknown>;
  if (!JSONRPCMessageSchema.safeParse(message).success) {
    throw invalidRequest('the body is not a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "id": <string or integer>, "method": <string>, "params": {…}})');
  }
  if (call && args !== undefined) (message.params as Record<string, unknown>).arguments = isObject(args) ? {} : args;
  const schema = typeof message.method === 'string' && 'id' in message ? requestSchemas.get(message.method) : undefined;
  const checked = schema?.safeParse(message);
  if (checked && !checked.success) {
    const error = { code: ErrorCode.InvalidParams, message: `Invalid params: ${describeIssue(checked.error.issues[0]!)}` };
    throw new RpcRefusal(jsonReply(200, JSON.stringify({ jsonrpc: '2.0', id: message.id, error })));
  }
  return { message, args: isObject(args) ? args : {} };
}

/**
 * `/api/mcp`: the router's public procedures as MCP tools, over MCP's Streamable HTTP transport (the official
 * SDK's), behind the same guards as the other doors, in this order: path (404), method (405: POST only),
 * Origin (403, as MCP asks against DNS rebinding), token (401, or 429 from the shared buckets, charged
 * MCP_REQUEST_UNITS per request), session (404: none exists), content type (415), body (413, 408), the
 * message (JSON-RPC errors), then the SDK.
 *
 * Stateless, with JSON answers: each request gets a fresh SDK server and transport, answers with one JSON
 * body, and leaves nothing behind. The tools are plain request and answer (no notifications, sampling or
 * subscriptions), so a session would hold nothing, and without one any instance answers any request.
 * The door reads the body itself (the SDK never touches the socket) and hands the SDK the parsed message:
 * the SDK's web-standard transport is given a request with no body, and its answer is written here.
 */
export function createMcpDoor(options: {
  router: AnyTRPCRouter;
  authenticate: Authenticate;
  waitForTurn: WaitForTurn;
  log: Logger;
  cors: CorsOrigins;
  publicUrl: string | undefined;
}) {
  const { router, authenticate, waitForTurn, log, cors, publicUrl } = options;
  const catalog = buildToolCatalog(router, {
    onFault: (error, context) => log.error({ requestId: context.requestId, err: error }, 'request failed'),
  });
  // The SDK server validates only elicitation answers with it (never asked for here); one for all requests.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  const ownOrigin = publicUrl ? new URL(publicUrl).origin : undefined;

  /**
   * MCP asks a server to refuse a page from an origin it does not trust (403), against DNS rebinding: a
   * foreign page whose host name was made to resolve to this server's address. Trusted: no Origin (not a
   * browser), this server's own (PUBLIC_URL), the configured CORS origins, and pages on the loopback
   * interface, which are the machine's own (an MCP inspector in a browser, say), never a rebinding's.
   */
  function checkOrigin(request: FrontRequest): void {
    const origin = request.raw.headers.origin;
    if (origin === undefined || origin === ownOrigin || cors === '*' || cors?.includes(origin) || isLoopbackOrigin(origin)) return;
    throw refuse('forbidden', `requests from pages on ${shown(origin)} are not allowed here; list the origin in CORS_ALLOWED_ORIGINS to allow it`);
  }

  async function answer(request: FrontRequest, response: ServerResponse): Promise<Reply> {
    if (request.url.pathname !== MCP_PATH) throw noSuchPath(request.url.pathname);
    if (request.method === 'OPTIONS') {
      // A browser on an allowed origin asks first what it may send (CORS preflight).
      const preflight = request.raw.headers['access-control-request-method'] !== undefined && corsHeaders(request.raw, cors)['Access-Control-Allow-Origin'];
      const allowed = {
        'Access-Control-Allow-Methods': ALLOW,
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, MCP-Protocol-Version',
        'Access-Control-Max-Age': '600',
      };
      return jsonReply(204, null, { Allow: ALLOW, ...(preflight ? allowed : {}) });
    }
    if (request.method !== 'POST') {
      throw refuse('methodNotAllowed', `${request.method} is not allowed on ${MCP_PATH}: this server keeps no sessions and opens no event stream; use POST`, {
        Allow: ALLOW,
      });
    }
    checkOrigin(request);
    const auth = await authenticate(request, MCP_REQUEST_UNITS);
    requireToken(auth);
    noteCharged(request, MCP_REQUEST_UNITS);
    if (request.raw.headers['mcp-session-id'] !== undefined) {
      return rpcError(404, -32001, 'Session not found: this server keeps no sessions; send requests without Mcp-Session-Id');
    }
    checkContentType(request.raw.headers['content-type'], ['application/json']);
    const body = await readBody(request, response);
    await authenticate.chargeForBody(auth, body.byteLength);
    noteCharged(request, bodyUnits(body.byteLength));
    // Parsing and the tool call are the work; reading the body was waiting (see work-queue.ts).
    await waitForTurn(1, response);
    let message: Record<string, unknown>;
    let args: Record<string, unknown>;
    try {
      ({ message, args } = readMessage(decodeUtf8(body)));
    } catch (error) {
      if (error instanceof RpcRefusal) return error.reply;
      if (error instanceof Refusal) return rpcError(400, ErrorCode.ParseError, `Parse error: ${error.message}`);
      throw error;
    }
    const method = typeof message.method === 'string' ? shown(message.method, 64) : 'response';
    const toolName = method === 'tools/call' && isObject(message.params) && typeof message.params.name === 'string' ? message.params.name : undefined;
    request.trace.rpc = toolName === undefined ? method : `${method} ${shown(toolName, 64)}`;

    const context = contextFor(auth, request.id, notingCharges(request, (units) => authenticate.chargeMore(auth, units)));
    const server = new Server(
      { name: 'plant-store', title: 'Plant Store', version: API_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalog.listFor(auth.actor) }));
    server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
      const result = await catalog.call(params.name, args, context);
      if (!result) throw new ProtocolError(ErrorCode.InvalidParams, `Unknown tool: ${shown(params.name, 128)}`);
      return result;
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const headers = new Headers();
      for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
        const value = request.raw.headers[name];
        if (typeof value === 'string') headers.set(name, value);
      }
      const sdkRequest = new Request(`${PLACEHOLDER_ORIGIN}${MCP_PATH}`, { method: 'POST', headers });
      const sdkAnswer = await transport.handleRequest(sdkRequest, { parsedBody: message });
      const text = await sdkAnswer.text();
      const contentType = sdkAnswer.headers.get('content-type');
      return { status: sdkAnswer.status, headers: contentType ? { 'Content-Type': contentType } : {}, body: text === '' ? null : text };
    } finally {
      await server.close();
    }
  }

  return async function serveMcp(request: FrontRequest, response: ServerResponse): Promise<void> {
    request.trace.door = 'mcp';
    let reply: Reply;
    try {
      reply = await answer(request, response);
    } catch (error) {
      if (error instanceof Refusal) reply = problemReply(error.problem, error.headers);
      else {
        log.error({ requestId: request.id, err: error }, 'request failed');
        reply = problemReply({ kind: 'internal', message: `${INTERNAL_ERROR_MESSAGE} (request id ${request.id})` });
      }
    }
    Object.assign(reply.headers, corsHeaders(request.raw, cors));
    writeReply(response, reply, { head: request.method === 'HEAD' });
  };
}
