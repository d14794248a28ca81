/**
 * Builds the app into `.next-e2e` when the sources are newer than that build, starts it with
 * `src/cli/start.ts` on a free port and a temporary SQLite file, and captures the admin token it prints
 * on the first start. Tests read the address and token from the environment (E2E_BASE_URL,
 * E2E_ADMIN_TOKEN, E2E_DATABASE_URL). The returned function stops the server (SIGTERM to its own pid)
 * and removes the temporary folder.
 *
 * E2E_REBUILD=1 always builds; E2E_SKIP_BUILD=1 never does. With E2E_BASE_URL and E2E_ADMIN_TOKEN set
 * already, no server is started: the tests run against that one (tokens for other users then need
 * E2E_DATABASE_URL for the token command).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST_DIR = '.next-e2e';
const TOKEN_LINE = /^\s*(pst_[A-Za-z0-9_-]{43})\s*$/m;

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

function buildIsStale(): boolean {
  const buildId = path.join(root, DIST_DIR, 'BUILD_ID');
  if (!existsSync(buildId)) return true;
  const built = statSync(buildId).mtimeMs;
  const inputs = ['src', 'public', 'prisma', 'next.config.mjs', 'package.json', 'package-lock.json', 'tsconfig.json'];
  return inputs.some((input) => newestMtime(path.join(root, input)) > built);
}

/**
 * `next build` adds its dist folder's type folders to tsconfig.json's `include`. This build's folder is
 * a test artefact, so those two lines are taken out again, and nothing else is touched (other builds,
 * into other folders, may add their own lines meanwhile).
 */
function restoreTsconfig(before: string): void {
  const file = path.join(root, 'tsconfig.json');
  const after = readFileSync(file, 'utf8');
  let text = after;
  for (const entry of [`${DIST_DIR}/types/**/*.ts`, `${DIST_DIR}/dev/types/**/*.ts`]) {
    if (before.includes(`"${entry}"`)) continue;
    const quoted = `"${entry}"`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    text = text.replace(new RegExp(`\\n[ \\t]*${quoted},`), '').replace(new RegExp(`,\\n[ \\t]*${quoted}(?=\\s*\\])`), '');
  }
  if (text === after) return;
  try {
    JSON.parse(text);
    writeFileSync(file, text);
  } catch {
    // Not ours to fix: leave it as the build left it.
  }
}

function build(): void {
  const tsconfig = readFileSync(path.join(root, 'tsconfig.json'), 'utf8');
  console.log(`[e2e] building into ${DIST_DIR}/ …`);
  // Next.js builds for production and warns about any other NODE_ENV.
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV')), NEXT_DIST_DIR: DIST_DIR, NEXT_TELEMETRY_DISABLED: '1' } as unknown as NodeJS.ProcessEnv;
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/next/dist/bin/next'), 'build'], { cwd: root, env, stdio: 'inherit' });
  restoreTsconfig(tsconfig);
  if (result.status !== 0) throw new Error(`next build failed (${result.status ?? result.signal})`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(baseURL: string, server: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the server exited with code ${server.exitCode} before it was ready`);
    try {
      const response = await fetch(`${baseURL}/`, { signal: AbortSignal.timeout(5_000) });
      if (response.ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the server did not answer at ${baseURL} in time`);
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.E2E_BASE_URL && process.env.E2E_ADMIN_TOKEN) {
    console.log(`[e2e] using the running server at ${process.env.E2E_BASE_URL}`);
    return async () => {};
  }
  if (process.env.E2E_REBUILD === '1' || (process.env.E2E_SKIP_BUILD !== '1' && buildIsStale())) build();
  else if (!existsSync(path.join(root, DIST_DIR, 'BUILD_ID'))) throw new Error(`no build in ${DIST_DIR}/ and E2E_SKIP_BUILD=1`);

  const dir = mkdtempSync(path.join(tmpdir(), 'plant-store-e2e-'));
  const databaseUrl = `file:${path.join(dir, 'e2e.db')}`;
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const logFile = path.join(dir, 'server.log');
  const log: string[] = [];

  const server = spawn(process.execPath, [path.join(root, 'node_modules/tsx/dist/cli.mjs'), '--conditions=react-server', 'src/cli/start.ts'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      NEXT_DIST_DIR: DIST_DIR,
      NEXT_TELEMETRY_DISABLED: '1',
      PORT: String(port),
      HOSTNAME_TO_BIND: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      PUBLIC_URL: baseURL,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let token: string | null = null;
  const gotToken = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log.push(text);
      const match = TOKEN_LINE.exec(log.join(''));
      if (match && !token) {
        token = match[1]!;
        resolve(token);
      }
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    server.on('exit', (code) => reject(new Error(`the server exited (code ${code}) before printing the admin token:\n${log.join('')}`)));
  });

  const stop = async () => {
    writeFileSync(logFile, log.join(''));
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    try {
      const kept = path.join(root, 'test-results', 'e2e');
      mkdirSync(kept, { recursive: true });
      copyFileSync(logFile, path.join(kept, 'server.log'));
    } catch {
      // the log is a convenience
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const adminToken = await Promise.race([
      gotToken,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no admin token within 60 s:\n${log.join('')}`)), 60_000)),
    ]);
    await waitUntilServing(baseURL, server, Date.now() + 60_000);
    process.env.E2E_BASE_URL = baseURL;
    process.env.E2E_ADMIN_TOKEN = adminToken;
    process.env.E2E_DATABASE_URL = databaseUrl;
    console.log(`[e2e] server ${baseURL} (pid ${server.pid}), database ${databaseUrl}`);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}
