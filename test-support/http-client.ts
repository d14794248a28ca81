/**
 * The suites' HTTP client: fetch for ordinary requests, node:http for what fetch cannot control (bodies in
 * chunks, the connection itself). Every JSON answer is parsed with exact integers.
 */
import http from 'node:http';
import net from 'node:net';

import { isInteger, parse } from 'lossless-json';

/**
 * A request that gets no answer in this time has hung the server; fail it before the test times out. Not an
 * expectation of speed: on a busy machine a create among a hundred parallel ones took over 10 s.
 */
const REQUEST_TIMEOUT_MS = 60_000;

/** Parses JSON keeping every integer exact: integer tokens become bigint, other numbers doubles. */
export function parseLossless(text: string): unknown {
  return parse(text, null, (token) => (isInteger(token) ? BigInt(token) : Number.parseFloat(token)));
}

export type ApiResponse = {
  request: { method: string; url: string; body?: string };
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed with exact integers (bigint); undefined when it is empty or not JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
};

export type RequestOptions = {
  /** The exact body text (sent as UTF-8 bytes, so fetch adds no Content-Type of its own), or a stream. */
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  /** Content-Type header; default application/json when there is a body; null sends none. */
  contentType?: string | null;
  /** Authorization header; default `Bearer <token>` when the client has a token; null sends none. */
  authorization?: string | null;
  headers?: Record<string, string>;
};

function isClosedConnection(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET' || /other side closed/.test(cause?.message ?? '');
}

export type ApiClient = {
  request: (method: string, path: string, options?: RequestOptions) => Promise<ApiResponse>;
  get: (path: string, options?: RequestOptions) => Promise<ApiResponse>;
  post: (path: string, body: string | Uint8Array | ReadableStream<Uint8Array>, options?: RequestOptions) => Promise<ApiResponse>;
  delete: (path: string, options?: RequestOptions) => Promise<ApiResponse>;
};

export function describeExchange(response: ApiResponse): string {
  const body = response.request.body === undefined ? '' : ` ${response.request.body.length > 300 ? `${response.request.body.slice(0, 300)}…` : response.request.body}`;
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('; ');
  const text = response.text.length > 500 ? `${response.text.slice(0, 500)}…` : response.text;
  return `${response.request.method} ${response.request.url}${body}\n  → ${response.status} [${headers}] ${text}`;
}

/**
 * A client for one server and one caller. `path` is absolute on the server (`/api/plants?limit=5`) or a
 * full URL (as in a `Link` header). `onResponse` sees every response (the suite checks each one against
 * the OpenAPI document there).
 */
export function api(baseUrl: string, token?: string | null, onResponse?: (response: ApiResponse) => void): ApiClient {
  async function request(method: string, target: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const url = /^https?:/.test(target) ? target : `${baseUrl}${target}`;
    const headers: Record<string, string> = { ...options.headers };
    const authorization = options.authorization === undefined ? (token ? `Bearer ${token}` : null) : options.authorization;
    if (authorization !== null) headers.Authorization = authorization;
    let body: Uint8Array | ReadableStream<Uint8Array> | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? Buffer.from(options.body, 'utf8') : options.body;
      const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
      if (contentType !== null) headers['Content-Type'] = contentType;
    } else if (options.contentType) {
      headers['Content-Type'] = options.contentType;
    }
    const described = `${method} ${url}${typeof options.body === 'string' ? ` ${options.body.slice(0, 200)}` : ''}`;
    let response: Response;
    let text: string;
    const send = () =>
      fetch(url, {
        method,
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit);
    try {
      try {
        response = await send();
      } catch (error) {
        // A pooled keep-alive connection can be closed by the server just as it is reused; HTTP clients
        // retry an idempotent request without a body once in that case (RFC 9112, 9.3.1). Nothing else is retried.
        if (!(method === 'GET' && body === undefined && isClosedConnection(error))) throw error;
        response = await send();
      }
      text = await response.text();
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new Error(`no complete answer within ${REQUEST_TIMEOUT_MS / 1000} s: ${described}`);
      }
      throw new Error(`the request failed: ${(error as Error).message}${cause}: ${described}`, { cause: error });
    }
    let json: unknown;
    if (text !== '') {
      try {
        json = parseLossless(text);
      } catch {
        json = undefined;
      }
    }
    const result: ApiResponse = {
      request: { method, url, body: typeof options.body === 'string' ? options.body : options.body === undefined ? undefined : '<bytes>' },
      status: response.status,
      headers: response.headers,
      text,
      json,
    };
    onResponse?.(result);
    return result;
  }
  return {
    request,
    get: (path, options) => request('GET', path, options),
    post: (path, body, options) => request('POST', path, { ...options, body }),
    delete: (path, options) => request('DELETE', path, options),
  };
}

/** An answer read off node:http in the suites' shape: headers as Headers, the body parsed losslessly when it is JSON. */
export function toApiResponse(request: ApiResponse['request'], response: http.IncomingMessage, text: string): ApiResponse {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : parseLossless(text);
  } catch {
    json = undefined;
  }
  return { request, status: response.statusCode ?? 0, headers, text, json };
}

/**
 * A request through node:http, for what fetch cannot control: a body sent in chunks with no
 * Content-Length, and the connection (pass a keep-alive `agent` with maxSockets 1 to reuse one).
 */
export function rawRequest(
  baseUrl: string,
  options: { method: string; path: string; headers?: Record<string, string>; chunks?: Uint8Array[]; agent?: http.Agent | false },
): Promise<ApiResponse> {
  const url = new URL(options.path, baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: options.method, headers: options.headers, agent: options.agent ?? false, timeout: REQUEST_TIMEOUT_MS },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const sent = { method: options.method, url: url.href, body: options.chunks ? '<chunks>' : undefined };
          resolve(toApiResponse(sent, response, Buffer.concat(parts).toString('utf8')));
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s: ${options.method} ${url.href}`)));
    request.on('error', (error) => reject(new Error(`${options.method} ${url.href} failed: ${error.message}`, { cause: error })));
    for (const chunk of options.chunks ?? []) request.write(chunk);
    request.end();
  });
}

/** `json` is parsed with JSON.parse: numbers are doubles (these answers are read for their error values). */
export type RawAnswer = { status: number; headers: Record<string, string>; text: string; json: unknown; closed: boolean };

/**
 * Writes `request` to a fresh socket byte for byte (any request line, duplicate or missing headers) and reads
 * one answer. `closed` tells whether the server closed the connection after it.
 */
export function rawExchange(baseUrl: string, request: string | Buffer, timeoutMs = REQUEST_TIMEOUT_MS): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const parts: Buffer[] = [];
    let settled = false;
    let ended = false;
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    const parse = (complete: boolean): RawAnswer | undefined => {
      const bytes = Buffer.concat(parts);
      const end = bytes.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).toLowerCase();
        headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
      }
      const length = Number(headers['content-length'] ?? 0);
      const body = bytes.subarray(end + 4);
      if (!complete && body.length < length) return undefined;
      const text = body.subarray(0, headers['content-length'] === undefined ? body.length : length).toString('utf8');
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: Number(statusLine!.split(' ')[1]), headers, text, json, closed: ended };
    };
    const finish = (error?: Error) => {
      if (settled) return;
      const answer = parse(true);
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(error ?? new Error(`the connection closed without an answer: ${Buffer.concat(parts).toString('latin1').slice(0, 200)}`));
    };
    socket.on('data', (part: Buffer) => {
      parts.push(part);
      const answer = parse(false);
      // A complete answer. One that says `Connection: close` is followed by the server's close: wait for it
      // (on a busy machine it may take longer than any fixed moment; the request's timeout bounds it). Any
      // other: wait a moment to see whether the server closes the connection anyway.
      if (answer && !/\bclose\b/i.test(answer.headers.connection ?? '')) setTimeout(() => finish(), 50);
    });
    socket.on('end', () => {
      ended = true;
      finish();
    });
    socket.on('error', (error) => finish(error));
    socket.write(request);
  });
}
