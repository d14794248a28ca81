/**
 * What the MCP suites share: the SDK's own client on a real server, raw JSON-RPC over HTTP for what a
 * well-behaved client never sends, and reading a tool result the way a client program would.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

import { errorCatalog, type ErrorKind } from '@/shared/errors';

import { expectNoInternalDetail } from './api-fixture';
import { api, type ApiResponse, describeExchange, parseLossless, type RequestOptions } from './http-client';

export const MCP_PATH = '/api/mcp';

/** The SDK's Client over its Streamable HTTP transport, with the token in a header as MCP hosts send it. */
export async function connectMcp(baseUrl: string, token: string, name = 'plant-store-e2e'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}${MCP_PATH}`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** The headers a Streamable HTTP client sends with a message. */
export const MCP_HEADERS = { Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' };

/** POSTs `body` (exact text) to the door with the headers a client sends, plus `options`; never throws on a status. */
export function postMcp(baseUrl: string, token: string | null, body: string, options: RequestOptions = {}): Promise<ApiResponse> {
  return api(baseUrl, token).post(MCP_PATH, body, { ...options, headers: { ...MCP_HEADERS, ...options.headers } });
}

/** A JSON-RPC request's text (`id` written as given, so a test can send any number). */
export const rpcText = (method: string, params: unknown, id: string | number = 1) =>
  `{"jsonrpc":"2.0","id":${typeof id === 'string' ? JSON.stringify(id) : id},"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;

/** A JSON-RPC error answer: the status, `id` null or the request's, the code, and a message with no internal detail. */
export function expectRpcError(response: ApiResponse, status: number, code: number, message?: RegExp): void {
  const exchange = describeExchange(response);
  expect(response.status, `status of\n${exchange}`).toBe(status);
  expect(response.headers.get('content-type'), exchange).toMatch(/^application\/json/);
  expect(response.json?.jsonrpc, exchange).toBe('2.0');
  expect(response.json?.error?.code, exchange).toBe(BigInt(code));
  expect(response.json?.error?.message, exchange).toBeTypeOf('string');
  expectNoInternalDetail(response.json.error.message, exchange);
  if (message) expect(response.json.error.message, exchange).toMatch(message);
}

/** The text of a result's only content block. */
export function textOf(result: CallToolResult | Record<string, unknown>): string {
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe('text');
  return content[0]!.text;
}

/** An isError result carrying exactly the catalogue's `{error, message}`. */
/** A tool's refusal: `isError` and the `{error, message}` of the catalogue's `kind` (or its value, in a test of the wire numbers). */
export function expectToolError(result: CallToolResult | Record<string, unknown>, kind: ErrorKind | number, message?: RegExp | string): { error: number; message: string } {
  const value = typeof kind === 'number' ? kind : errorCatalog[kind].value;
  expect(result.isError, JSON.stringify(result)).toBe(true);
  expect(result.structuredContent, 'an error carries no structured result').toBeUndefined();
  const body = JSON.parse(textOf(result)) as { error: number; message: string };
  expect(Object.keys(body).sort(), JSON.stringify(body)).toEqual(['error', 'message']);
  expect(body.error, JSON.stringify(body)).toBe(value);
  expectNoInternalDetail(body.message, JSON.stringify(body));
  if (typeof message === 'string') expect(body.message).toContain(message);
  else if (message) expect(body.message).toMatch(message);
  return body;
}

/** A successful result: its structured content, and its text read losslessly (int64 as bigint). */
export function expectToolResult<T = Record<string, unknown>>(result: CallToolResult | Record<string, unknown>): { structured: T; exact: unknown } {
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  return { structured: result.structuredContent as T, exact: parseLossless(textOf(result)) };
}
