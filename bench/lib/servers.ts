/**
 * How the bench starts each server: the app of a checkout (compiled: node .bench-build/server.mjs; the
 * older kind: node --conditions=react-server --import tsx 130f597:src/cli/start.ts with Next.js), the floor and the
 * ceiling (bundled from bench/), and how it makes the member's token (the checkout's token command).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { BENCH_BUILD_DIR, type Checkout, OLD_DIST_DIR } from './build';
import { tsxCli } from './paths';
import { childEnv, type Server, startProcess } from './proc';

/**
 * The app's settings for the bench: its defaults (the request log on, the connection caps, the auth-failure
 * limit), except the per-token rate limit, which would refuse autocannon's one token at 32 connections: it
 * stays on, with a bucket far above any rate the bench reaches, so every request still pays for the limiter.
 * The older kind reads NEXT_DIST_DIR for its build and ignores the settings it does not know.
 */
export const BENCH_RATE_LIMIT = '100000000/10000000';

export function appEnv(checkout: Checkout, port: number, databaseUrl: string): Record<string, string> {
  return {
    PORT: String(port),
    HOSTNAME_TO_BIND: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    RATE_LIMIT_PER_TOKEN: BENCH_RATE_LIMIT,
    // No balancer watches its health: a SIGTERM stops it at once.
    SHUTDOWN_DRAIN_MS: '0',
    ...(checkout.kind === 'next' ? { NEXT_DIST_DIR: OLD_DIST_DIR } : {}),
  };
}

/**
 * The node flags the checkout's `npm start` passes before its script (`node --flag … dist/server.mjs`), so
 * the bench runs the server as npm start does, with a commit's own flags when it is the baseline.
 */
function startFlags(checkout: Checkout): string[] {
  const manifest = JSON.parse(readFileSync(path.join(checkout.dir, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const flags = /^node((?:\s+--[\w-]+(?:=\S+)?)*)\s/.exec(manifest.scripts?.start ?? '')?.[1];
  return flags ? flags.trim().split(/\s+/) : [];
}

/** node's arguments that run the app of this checkout, after any flags of the bench's own. */
export function appArgs(checkout: Checkout): string[] {
  return checkout.kind === 'compiled'
    ? [...startFlags(checkout), path.join(checkout.dir, BENCH_BUILD_DIR, 'server.mjs')]
    : ['--conditions=react-server', '--import', 'tsx', 'src/cli/start.ts'];
}

/** The app's command line as the reports show it, paths relative to the checkout. */
export function appCommandLine(checkout: Checkout): string {
  return ['node', ...appArgs(checkout).map((arg) => (path.isAbsolute(arg) ? path.relative(checkout.dir, arg) : arg))].join(' ');
}

/** The app as `npm start` runs it, but with node itself as the process (so its pid is the server's). */
export function startApp(options: {
  name: string;
  checkout: Checkout;
  port: number;
  databaseUrl: string;
  nodeFlags?: string[];
  ipc?: boolean;
  /** Settings beside the bench's (appEnv), which they override. */
  env?: Record<string, string>;
}): Server {
  return startProcess({
    name: options.name,
    command: process.execPath,
    args: [...(options.nodeFlags ?? []), ...appArgs(options.checkout)],
    env: { ...appEnv(options.checkout, options.port, options.databaseUrl), ...options.env },
    port: options.port,
    cwd: options.checkout.dir,
    ipc: options.ipc,
  });
}

/**
 * A floor, bundled, on the same SQLite file as the app: `floor` (bench/floor.ts: node:http + better-sqlite3) or
 * `stack` (bench/stack-floor.ts: tRPC + zod + Prisma's client, used minimally).
 */
export function startFloor(name: 'floor' | 'stack', script: string, port: number, databaseUrl: string, nodeFlags: string[] = []): Server {
  return startProcess({
    name,
    command: process.execPath,
    args: [...nodeFlags, script],
    env: { DATABASE_URL: databaseUrl, PORT: String(port), HOSTNAME_TO_BIND: '127.0.0.1' },
    port,
  });
}

/** The ceiling (bench/ceiling.ts, bundled): node:http answering `body` with the floor's headers, no database. */
export function startCeiling(script: string, port: number, body: string): Server {
  return startProcess({
    name: 'ceil',
    command: process.execPath,
    args: [script],
    env: { PORT: String(port), HOSTNAME_TO_BIND: '127.0.0.1', CEILING_BODY: body },
    port,
  });
}

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;

/** `token create --user NAME --role ROLE` with the checkout's token command; the token is stdout's last line. */
export function createToken(checkout: Checkout, databaseUrl: string, user: string, role: 'member' | 'admin'): string {
  const args =
    checkout.kind === 'compiled'
      ? [path.join(checkout.dir, BENCH_BUILD_DIR, 'token.mjs')]
      : [tsxCli(checkout.dir), '--conditions=react-server', 'src/cli/token.ts'];
  const result = spawnSync(process.execPath, [...args, 'create', '--user', user, '--role', role], {
    cwd: checkout.dir,
    env: childEnv({ DATABASE_URL: databaseUrl }),
    encoding: 'utf8',
  });
  const token = result.stdout.trimEnd().split('\n').at(-1)?.trim() ?? '';
  if (result.status !== 0 || !TOKEN_LINE.test(token)) throw new Error(`token create failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  return token;
}
