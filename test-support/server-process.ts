/**
 * Starts the real server (the test build's `server.mjs`, as `npm start` runs it: migrations, first admin,
 * the one node:http server) on its own database (a SQLite file, or a PostgreSQL database under
 * TEST_DATABASE=postgresql: ./database.ts) and port. No mocks: what the tests see is what a client sees.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

import { childEnv, projectRoot, TEST_BUILD_DIR } from './build';
import { createTestDatabase, type TestDatabase } from './database';
import { freePort, waitForExit } from './processes';
import { createTokenWithCli, type IssuedToken, revokeTokenWithCli } from './token-command';

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;
/** A bound against a server that never comes up; a start takes seconds, several times that on a busy machine. */
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;


export type RunningServer = {
  /** `http://127.0.0.1:<port>`; the API is under `${baseUrl}/api`. */
  baseUrl: string;
  /** The token the server printed for the first admin. */
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
  /** The server's own pid (node running server.mjs, no wrapper process). */
  pid: number;
  /** Sends a signal to the server process itself (SIGKILL for crash tests, SIGTERM for shutdown). */
  kill: (signal: NodeJS.Signals) => void;
  /** Settles when the server exits, with its exit code or signal. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/**
 * `database`: start on a database of the caller's (a restart, or a second instance); it is then left alone
 * on stop, and `adminToken` is '' unless this server printed one. `dir`: run another checkout's test build
 * (`<dir>/.test-build/server.mjs`, in that folder), for a benchmark's baseline. `port`: one the caller chose
 * (freePort()), to reach the server before this resolves, as its first clients do, or to start a restarted
 * instance on the address a load balancer knows it by; else a free one.
 */
export async function startServer(options: { database?: TestDatabase; env?: Record<string, string>; dir?: string; port?: number } = {}): Promise<RunningServer> {
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await createTestDatabase());
  const databaseUrl = database.url;
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;

  const dir = options.dir ?? projectRoot;
  const child = spawn(process.execPath, [path.join(dir, TEST_BUILD_DIR, 'server.mjs')], {
    cwd: dir,
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
      const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) await fail(`GET /api/health did not answer 200 within ${READY_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
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


export { projectRoot };
