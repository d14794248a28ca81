/**
 * Starts the real app (`src/cli/start.ts`: migrations, first admin, `next start`) on its own database
 * (a SQLite file, or a PostgreSQL database under TEST_DATABASE=postgresql: ./database.ts) and port, and
 * talks to it over HTTP. No mocks: what the tests see is what a client sees.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';

import { isInteger, parse } from 'lossless-json';

import { createTestDatabase, type TestDatabase } from './database';
import { freePort, waitForExit } from './processes';
import { childEnv, projectRoot } from './test-build';

export { childEnv, projectRoot };

const tsxCli = path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
/** A request that gets no answer in this time has hung the server; fail it before the test times out. */
const REQUEST_TIMEOUT_MS = 10_000;


export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs a command from the project folder with the suites' environment, collecting its output. */
export function runCommand(command: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `src/cli/token.ts` (what `npm run --silent token -- …` runs) against one database. */
export function runTokenCli(databaseUrl: string, args: string[]): Promise<CliResult> {
  return runCommand(process.execPath, [tsxCli, '--conditions=react-server', 'src/cli/token.ts', ...args], { DATABASE_URL: databaseUrl });
}

export type IssuedToken = { id: number; token: string };

/** `token create`: the token is the last line of stdout, its id is in the first line ("… token <id> …"). */
export async function createTokenWithCli(databaseUrl: string, user: string, role?: 'admin' | 'member'): Promise<IssuedToken> {
  const result = await runTokenCli(databaseUrl, ['create', '--user', user, ...(role ? ['--role', role] : [])]);
  const lines = result.stdout.trimEnd().split('\n');
  const token = lines.at(-1)?.trim() ?? '';
  const id = /\btoken (\d+)\b/.exec(lines[0] ?? '')?.[1];
  if (result.code !== 0 || !TOKEN_LINE.test(token) || id === undefined) {
    throw new Error(`token create --user ${user} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
  return { id: Number(id), token };
}

export async function revokeTokenWithCli(databaseUrl: string, id: number): Promise<void> {
  const result = await runTokenCli(databaseUrl, ['revoke', String(id)]);
  if (result.code !== 0) throw new Error(`token revoke ${id} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
}

export type RunningServer = {
  /** `http://127.0.0.1:<port>`; the API is under `${baseUrl}/api`. */
  baseUrl: string;
  /** The token start.ts printed for the first admin. */
  adminToken: string;
  database: TestDatabase;
  databaseUrl: string;
  /** Everything the server printed so far. */
  stdout: () => string;
  stderr: () => string;
  /** Both streams: the server's log (structured lines may go to either). */
  log: () => string;
  createToken: (user: string, role?: 'admin' | 'member') => Promise<IssuedToken>;
  revokeToken: (id: number) => Promise<void>;
  /** SIGTERM to the server's own pid, then waits for it to exit; drops its database unless it was given one. */
  stop: () => Promise<void>;
  /** Whether the server process has exited. */
  exited: () => boolean;
  /** The server's own pid (node running src/cli/start.ts, no wrapper process). */
  pid: number;
  /** Sends a signal to the server process itself (SIGKILL for crash tests, SIGTERM for shutdown). */
  kill: (signal: NodeJS.Signals) => void;
  /** Settles when the server exits, with its exit code or signal. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/**
 * `database`: start on a database of the caller's (a restart, or a second instance); it is then left alone
 * on stop, and `adminToken` is '' unless this server printed one.
 */
export async function startServer(options: { database?: TestDatabase; env?: Record<string, string> } = {}): Promise<RunningServer> {
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await createTestDatabase());
  const databaseUrl = database.url;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;

  // `--import tsx` runs start.ts in this very process; the tsx CLI would run it in a grandchild that
  // signals sent to this pid would miss.
  const child = spawn(process.execPath, ['--conditions=react-server', '--import', 'tsx', 'src/cli/start.ts'], {
    cwd: projectRoot,
    env: childEnv({ ...options.env, PORT: String(port), DATABASE_URL: databaseUrl, HOSTNAME_TO_BIND: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        child.kill('SIGKILL');
        await waitForExit(child, STOP_TIMEOUT_MS);
      }
    }
    if (ownsDatabase) await database.drop();
  };

  const fail = async (reason: string): Promise<never> => {
    await stop();
    throw new Error(`the server did not start: ${reason}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`);
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await fail(`it exited with ${child.exitCode ?? child.signalCode}`);
    }
    try {
      const response = await fetch(`${baseUrl}/api/openapi.json`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) await fail(`GET /api/openapi.json did not answer 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const adminToken = stdout
    .split('\n')
    .map((line) => line.trim())
    .find((line) => TOKEN_LINE.test(line));
  if (!adminToken && ownsDatabase) await fail('it printed no admin token (a line matching /^pst_[A-Za-z0-9_-]{43}$/)');

  return {
    baseUrl,
    adminToken: adminToken ?? '',
    database,
    databaseUrl,
    stdout: () => stdout,
    stderr: () => stderr,
    log: () => `${stdout}\n${stderr}`,
    createToken: (user, role) => createTokenWithCli(databaseUrl, user, role),
    revokeToken: (id) => revokeTokenWithCli(databaseUrl, id),
    stop,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    pid: child.pid!,
    kill: (signal) => void child.kill(signal),
    exit,
  };
}

// ---------------------------------------------------------------------------------------------------------
// The HTTP client

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
