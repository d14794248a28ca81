/**
 * A private PostgreSQL server for the suites: a fresh cluster in a temp folder (initdb), listening on a
 * loopback port and its own socket folder (pg_ctl), stopped and deleted afterwards. Nothing of the
 * machine's own PostgreSQL (its clusters, its port 5432) is used or touched.
 *
 * Run by hand to keep one up while developing:
 *   node --import tsx test-support/postgres.ts     # prints TEST_POSTGRES_URL=…, stops on Ctrl-C
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { freePort } from './processes';

export type PrivatePostgres = {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`: a superuser, trusted on loopback only. */
  url: string;
  port: number;
  dataDir: string;
  stop: () => void;
};

/** initdb and pg_ctl from PATH, else from Debian's versioned folder (the package puts them off PATH). */
export function postgresBinDir(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(path.delimiter).find((dir) => dir && existsSync(path.join(dir, 'initdb')));
  if (onPath) return onPath;
  const debianRoot = '/usr/lib/postgresql';
  if (!existsSync(debianRoot)) return undefined;
  const newest = readdirSync(debianRoot)
    .filter((version) => existsSync(path.join(debianRoot, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : path.join(debianRoot, newest, 'bin');
}


/**
 * PostgreSQL refuses to run as root. As root (CI, containers) the server runs as the `postgres` account
 * Debian's package creates, in a folder handed over to it.
 */
function runAsServerUser(): { uid: number; gid: number; wrap: (command: string, args: string[]) => [string, string[]] } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid, wrap: (command, args) => ['runuser', ['-u', 'postgres', '--', command, ...args]] };
}

function run(command: string, args: string[], what: string): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${what} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const binDir = postgresBinDir();
  if (!binDir) {
    throw new Error('PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin): apt-get install postgresql');
  }
  const serverUser = runAsServerUser();
  const as = (command: string, args: string[]) => serverUser?.wrap(command, args) ?? [command, args];

  const root = mkdtempSync(path.join(os.tmpdir(), 'plant-store-pg-'));
  if (serverUser) chownSync(root, serverUser.uid, serverUser.gid);
  const dataDir = path.join(root, 'data');
  const port = await freePort();

  try {
    run(...as(path.join(binDir, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-locale', '--no-sync']), 'initdb');
    const serverOptions = [
      `-p ${port}`,
      "-c listen_addresses='127.0.0.1'",
      `-c unix_socket_directories='${root}'`,
      // Several test servers run at once, each with a connection pool, plus the tests' own clients.
      '-c max_connections=300',
    ].join(' ');
    run(...as(path.join(binDir, 'pg_ctl'), ['-D', dataDir, '-l', path.join(root, 'server.log'), '-o', serverOptions, '-w', '-t', '60', 'start']), 'pg_ctl start');
  } catch (error) {
    spawnSync(...as(path.join(binDir, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', 'stop']), { stdio: 'ignore' });
    rmSync(root, { recursive: true, force: true });
    throw error;
  }

  let stopped = false;
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    stop: () => {
      if (stopped) return;
      stopped = true;
      spawnSync(...as(path.join(binDir, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']), { stdio: 'ignore' });
      rmSync(root, { recursive: true, force: true });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await startPrivatePostgres();
  console.log(`TEST_POSTGRES_URL=${server.url}`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.stop();
      process.exit(0);
    });
  }
  setInterval(() => {}, 1 << 30);
}
