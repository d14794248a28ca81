/**
 * The admin page's door as its client speaks it, for tests that try the same finding on both doors: calls
 * with superjson input (`json`, and `meta` tagging bigint ids), batches, and tRPC's error body read back.
 */
import { expect } from 'vitest';

export type TrpcErrorBody = { message: string; data: { httpStatus: number; error: number; field: string | null } };

type Call = { token?: string; method?: 'GET' | 'POST'; body?: string; query?: string };

/** One request to `/api/trpc/<path>`: a GET unless a body is given. */
export function trpcRequest(baseUrl: string, path: string, call: Call = {}): Promise<Response> {
  const headers: Record<string, string> = {};
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

/** The errors of an answer, one per call (a single call's error as a list of one); undefined for a result. */
export async function trpcErrors(response: Response): Promise<(TrpcErrorBody | undefined)[]> {
  const body = (await response.json()) as { error?: { json: TrpcErrorBody } } | { error?: { json: TrpcErrorBody } }[];
  return (Array.isArray(body) ? body : [body]).map((entry) => entry.error?.json);
}

/** Expects the answer to be one error (a refusal before any call ran) with this status and error value. */
export async function expectTrpcError(response: Response, status: number, value: number, message?: string): Promise<TrpcErrorBody> {
  expect(response.status, `status (error ${value} expected)`).toBe(status);
  const errors = await trpcErrors(response);
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(error?.data.error, error?.message).toBe(value);
    if (message !== undefined) expect(error?.message).toContain(message);
  }
  return errors[0]!;
}
