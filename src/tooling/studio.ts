// `npm run studio [-- --port N] [-- --write]`: Prisma Studio on the database DATABASE_URL names, made as safe as it
// can be made. It reads only, unless --write: its connection is read-only (src/tooling/studio-access.ts, through
// prisma.config.ts, which `npx prisma studio` reads too), because Studio's edits can land on another row.
//
// What Prisma Studio 7 (prisma 7.10, @prisma/studio-core 0.33) does by itself, read in node_modules/prisma/build:
// - it listens on 127.0.0.1 only, and answers a request whose Origin is not its own with 403; it has no login, and
//   it does not check the Host header;
// - its CLI asks checkpoint.prisma.io for updates and sends usage events there unless CHECKPOINT_DISABLE=1;
// - its page reports "studio_launched" to its server (/telemetry, forwarded to checkpoint.prisma.io unless
//   CHECKPOINT_DISABLE=1) and ALSO straight from the browser to https://checkpoint.prisma.io/v1/check/…, which no
//   variable turns off (the page cannot see the environment);
// - its page loads nothing else from the network (scripts and styles are its own files);
// - it opens a browser unless `--browser none`, and creates an empty SQLite file when the URL names none;
// - it reads SQLite integers as JavaScript numbers: ids beyond 2^53 are rounded (docs/commands.md, "Prisma Studio"),
//   and it finds the row an edit or a delete is for by the values it shows: such a row's edit changes the plant
//   whose id is the rounded number, when there is one.
//
// So Studio runs on a loopback port of its own with the CLI's checks off, and people reach it through a guard on
// 127.0.0.1 that answers only to loopback Host names and its own Origin, keeps the page's telemetry on this
// machine, and sends a Content-Security-Policy that lets the page connect to nothing but this guard: the browser
// refuses the page's direct call to Prisma's server. The database reaches Studio through prisma.config.ts (from
// DATABASE_URL), never in argv, where every user of the machine could read a PostgreSQL password.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { databaseEngine, databaseFilePath, DEFAULT_DATABASE_URL } from '../server/db/database-url';

import { STUDIO_WRITE_VARIABLE } from './studio-access';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const prismaCli = path.join(projectRoot, 'node_modules', 'prisma', 'build', 'index.js');
const DEFAULT_PORT = 5555;

/** What the page may load and connect to: itself only. Its one inline style and config script need 'unsafe-inline'. */
export const STUDIO_CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The environment Studio's CLI runs with: no update check, no usage events, no browser of its own; writing only
 * when asked for here (a STUDIO_WRITE=1 left in the shell does not count).
 */
export function studioEnvironment(environment: Record<string, string | undefined>, { write = false } = {}): Record<string, string | undefined> {
  return {
    ...environment,
    [STUDIO_WRITE_VARIABLE]: write ? '1' : undefined,
    CHECKPOINT_DISABLE: '1',
    PRISMA_HIDE_UPDATE_MESSAGE: '1',
    BROWSER: 'none',
    // generate and studio never run Prisma's native schema engine; any existing file stops its download.
    PRISMA_SCHEMA_ENGINE_BINARY: environment.PRISMA_SCHEMA_ENGINE_BINARY ?? fileURLToPath(import.meta.url),
  };
}

/**
 * The arguments for `prisma studio`. No URL: prisma.config.ts gives the CLI DATABASE_URL's database (so no
 * password appears in argv). Throws with a sentence for the person when it cannot be safe.
 */
export function studioArguments({ databaseUrl, internalPort, cwd = process.cwd() }: { databaseUrl: string; internalPort: number; cwd?: string }): string[] {
  if (databaseEngine(databaseUrl) === 'sqlite') {
    const file = databaseFilePath(databaseUrl, cwd);
    // A writable Studio would create an empty file for a mistyped path and show no tables.
    if (!existsSync(file) || !statSync(file).isFile()) {
      throw new Error(`DATABASE_URL=${databaseUrl}: there is no database at ${file}; start the app once (npm start) or run npm run db:migrate`);
    }
  }
  return ['studio', '--browser', 'none', '--port', String(internalPort)];
}

/** What the person is told once Studio answers. */
export function studioReadyMessage(port: number, { write }: { write: boolean }): string {
  const address = `Prisma Studio is running at http://127.0.0.1:${port}/`;
  return write
    ? `${address}, and can WRITE. On SQLite it shows ids beyond 2^53 rounded, and an edit or a delete of such a row changes the plant whose id is the rounded number, when there is one: change those plants through the admin page or the API (docs/commands.md, "Prisma Studio").`
    : `${address}, read-only: its edits are refused (npm run studio -- --write to edit; docs/commands.md, "Prisma Studio").`;
}

const loopbackHosts = (port: number) => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

/**
 * The guard in front of Studio: loopback Host names only (a DNS-rebinding page names its own host), the page's own
 * Origin only (Studio checks Origin against its internal port, so the guard checks it and passes none on),
 * /telemetry answered here, and the CSP and a few hardening headers on every answer.
 */
export function createStudioGuard({ studioPort, port }: { studioPort: number; port: number }): http.Server {
  const hosts = loopbackHosts(port);
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  return http.createServer((request, response) => {
    const refuse = (status: number, text: string) => {
      response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Security-Policy': STUDIO_CSP });
      response.end(`${text}\n`);
    };
    if (!hosts.has(request.headers.host ?? '')) return refuse(421, `Prisma Studio answers at http://127.0.0.1:${port}/ only`);
    const origin = request.headers.origin;
    if (origin !== undefined && !origins.has(origin)) return refuse(403, 'Forbidden: another origin');
    if (request.method === 'POST' && request.url === '/telemetry') {
      request.resume();
      response.writeHead(204, { 'Content-Security-Policy': STUDIO_CSP });
      return response.end();
    }
    const headers = { ...request.headers, host: `127.0.0.1:${studioPort}` };
    delete headers.origin;
    const upstream = http.request({ host: '127.0.0.1', port: studioPort, method: request.method, path: request.url, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, {
        ...answer.headers,
        'content-security-policy': STUDIO_CSP,
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
        'referrer-policy': 'no-referrer',
        'cross-origin-resource-policy': 'same-origin',
        'cache-control': 'no-store',
      });
      answer.pipe(response);
    });
    upstream.once('error', () => (response.headersSent ? response.destroy() : refuse(502, 'Prisma Studio is not answering')));
    request.pipe(upstream);
  });
}

/** A loopback port nobody listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ options: { port: { type: 'string' }, write: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    throw new Error(`${(error as Error).message}. npm run studio takes --port and --write only: the database is DATABASE_URL's (a URL in argv would show its password to every user of the machine)`);
  }
  if (values.help) {
    console.log('usage: npm run studio [-- --port N] [-- --write]   (Prisma Studio on DATABASE_URL, at http://127.0.0.1:N/, default 5555; read-only unless --write)');
    return;
  }
  const write = values.write === true;
  const port = Number(values.port ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error('--port is a port number, 1 to 65535');
  if (!existsSync(prismaCli)) throw new Error('The Prisma CLI is not installed (a production install?): Studio needs npm ci.');

  const internalPort = await freePort();
  const args = studioArguments({ databaseUrl: process.env.DATABASE_URL || DEFAULT_DATABASE_URL, internalPort });
  const guard = createStudioGuard({ studioPort: internalPort, port });
  await new Promise<void>((resolve, reject) => {
    guard.once('error', reject);
    guard.listen(port, '127.0.0.1', resolve);
  });

  // In the person's working directory, where the app resolves a relative DATABASE_URL; the project's config.
  const studio = spawn(process.execPath, [prismaCli, ...args, '--config', path.join(projectRoot, 'prisma.config.ts')], {
    env: studioEnvironment(process.env, { write }) as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let announced = false;
  studio.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    // Studio names its internal address; people use the guard's.
    for (const line of chunk.split('\n')) {
      if (/Prisma Studio is running at/.test(line)) {
        if (!announced) console.log(studioReadyMessage(port, { write }));
        announced = true;
      } else if (line.trim() !== '' && !line.includes(`localhost:${internalPort}`)) {
        console.log(line);
      }
    }
  });
  const stop = () => studio.kill('SIGTERM');
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  studio.once('exit', (code, signal) => {
    guard.close();
    guard.closeAllConnections();
    process.exitCode = code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
