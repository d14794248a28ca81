/**
 * The admin page's door as its client speaks it, for tests that try the same finding on both doors: calls
 * with superjson input (`json`, and `meta` tagging bigint ids), batches, and tRPC's error body read back.
 * The one tRPC client of the API tests: `trpcCall` for a call as the page makes it, `trpcRequest` for a
 * request shaped by hand.
 */
import superjson from 'superjson';
import { expect } from 'vitest';

import { errorCatalog, type ErrorKind } from '@/shared/errors';

export type TrpcErrorBody = { message: string; data: { httpStatus: number; error: number; field: string | null } };

type Call = { token?: string; method?: string; body?: string; query?: string; headers?: Record<string, string> };

/** One request to `/api/trpc/<path>`: a GET unless a body is given. */
export function trpcRequest(baseUrl: string, path: string, call: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${baseUrl}/api/trpc/${path}${call.query ? `?${call.query}` : ''}`, { method: call.method ?? (call.body === undefined ? 'GET' : 'POST'), headers, body: call.body });
}

/** A batch of `paths` with their superjson inputs (one object per call): `?batch=1`, POST for mutations. */
export function trpcBatch(baseUrl: string, token: string, paths: string[], inputs: unknown[], method: 'GET' | 'POST' = 'POST'): Promise<Response> {
  const input = JSON.stringify(Object.fromEntries(inputs.map((value, index) => [index, value])));
  return method === 'POST'
    ? trpcRequest(baseUrl, paths.join(','), { token, query: 'batch=1', body: input })
    : trpcRequest(baseUrl, paths.join(','), { token, query: `batch=1&input=${encodeURIComponent(input)}` });
}

/** What a call answered: its status, its body parsed (undefined when it is not JSON) and as sent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tRPC answers of several shapes, read as each test needs
export type TrpcAnswer = { status: number; body: any; text: string };

/**
 * One call as the admin page's client makes it: the input in superjson, a query as a GET with `?input=`, a
 * mutation as a POST (`{}` when it has no input).
 */
export async function trpcCall(
  baseUrl: string,
  kind: 'query' | 'mutation',
  procedure: string,
  { token, input }: { token?: string | null; input?: unknown } = {},
): Promise<TrpcAnswer> {
  const serialized = input === undefined ? undefined : JSON.stringify(superjson.serialize(input));
  const response =
    kind === 'query'
      ? await trpcRequest(baseUrl, procedure, { token: token ?? undefined, query: serialized === undefined ? undefined : `input=${encodeURIComponent(serialized)}` })
      : await trpcRequest(baseUrl, procedure, { token: token ?? undefined, body: serialized ?? '{}' });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** The result of a call that succeeded, read back from superjson (bigint ids as bigint, dates as Date). */
export function trpcData<T = unknown>(answer: TrpcAnswer): T {
  return superjson.deserialize<T>((answer.body as { result: { data: Parameters<typeof superjson.deserialize>[0] } }).result.data);
}

/** The errors of an answer, one per call (a single call's error as a list of one); undefined for a result. */
export async function trpcErrors(response: Response): Promise<(TrpcErrorBody | undefined)[]> {
  const body = (await response.json()) as { error?: { json: TrpcErrorBody } } | { error?: { json: TrpcErrorBody } }[];
  return (Array.isArray(body) ? body : [body]).map((entry) => entry.error?.json);
}

/** Expects the answer to be one error (a refusal before any call ran) with this status and error value. */
/** Every call of the answer failed with the error `kind` of the catalogue (or, in a test of the wire numbers, `status` and `value`). */
export async function expectTrpcError(response: Response, kind: ErrorKind, message?: string): Promise<TrpcErrorBody>;
export async function expectTrpcError(response: Response, status: number, value: number, message?: string): Promise<TrpcErrorBody>;
export async function expectTrpcError(response: Response, ...args: [ErrorKind, string?] | [number, number, string?]): Promise<TrpcErrorBody> {
  const [status, value, message] = typeof args[0] === 'string' ? [errorCatalog[args[0]].status, errorCatalog[args[0]].value, args[1] as string | undefined] : (args as [number, number, string?]);
  expect(response.status, `status (error ${value} expected)`).toBe(status);
  const errors = await trpcErrors(response);
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(error?.data.error, error?.message).toBe(value);
    if (message !== undefined) expect(error?.message).toContain(message);
  }
  return errors[0]!;
}
