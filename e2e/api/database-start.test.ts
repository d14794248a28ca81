/**
 * The database at start, as `npm start` meets it: the built server (and the token command) as real processes,
 * on the default DATABASE_URL in an empty folder, on a folder that does not exist yet, and on databases that
 * cannot be used. Nothing may connect before the migrations have run (the first start on a fresh clone used
 * to crash: "Cannot open database because the directory does not exist"), and a database that cannot be used
 * stops the start with one line naming DATABASE_URL and the path, never a stack trace.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { childEnv, testBuildDir } from '@test-support/build';
import { testEngine } from '@test-support/database';
import { freePort } from '@test-support/processes';

const TOKEN = /pst_[A-Za-z0-9_-]{43}/;
const EXIT_TIMEOUT_MS = 60_000;

/**
 * Permissions do not stop root, and CI runs as root: there the processes that must meet a folder or file they
 * may not write run as the unprivileged user `nobody`, as a service account would.
 */
const unprivileged: Pick<SpawnOptions, 'uid' | 'gid'> = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

type Started = {
  /** Settles when the process exits. */
  exit: Promise<Run>;
  /** Resolves true once GET /api/health answers 200, false if the process exited first. */
  serving: () => Promise<boolean>;
  stdout: () => string;
  /** Both streams, for a failure's message. */
  output: () => string;
  /** SIGTERM to this process's own pid; resolves when it has exited. */
  stop: () => Promise<Run>;
};

/** `node <build>/<entry> …args` in `cwd`, with `env` over the suite's environment (null removes a variable). */
function start(entry: 'server.mjs' | 'token.mjs', options: { cwd: string; env: Record<string, string | null>; args?: string[]; as?: Pick<SpawnOptions, 'uid' | 'gid'> }): Started & { port: Promise<number> } {
  let stdout = '';
  let stderr = '';
  const port = freePort();
  const child = port.then((free) => {
    const env = childEnv({ PORT: String(free), HOSTNAME_TO_BIND: '127.0.0.1' });
    for (const [name, value] of Object.entries(options.env)) {
      if (value === null) delete env[name];
      else env[name] = value;
    }
    const spawned = spawn(process.execPath, [path.join(testBuildDir, entry), ...(options.args ?? [])], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...options.as,
    });
    spawned.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    spawned.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return spawned;
  });
  const exit = child.then(
    (spawned) =>
      new Promise<Run>((resolve, reject) => {
        const timer = setTimeout(() => {
          spawned.kill('SIGKILL');
          reject(new Error(`${entry} did not exit within ${EXIT_TIMEOUT_MS / 1000} s\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
        }, EXIT_TIMEOUT_MS);
        spawned.once('close', (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal, stdout, stderr });
        });
      }),
  );
  let exited = false;
  void exit.then(
    () => (exited = true),
    () => (exited = true),
  );
  return {
    port,
    exit,
    stdout: () => stdout,
    output: () => `--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
    serving: async () => {
      const url = `http://127.0.0.1:${await port}/api/health`;
      // No clock of its own: the loop ends when the server answers or exits (exit's own bound ends a hang).
      while (!exited) {
        try {
          const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
          await response.arrayBuffer();
          if (response.status === 200) return true;
        } catch {
          // Not listening yet.
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return false;
    },
    stop: async () => {
      (await child).kill('SIGTERM');
      return exit;
    },
  };
}

/** The one line a database that cannot be used leaves: on stderr, alone, naming the variable, no stack. */
function expectOneLineRefusal(run: Run, { url, says }: { url: string; says: RegExp | string }): void {
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toContain(`DATABASE_URL=${url}`);
  expect(lines[0]).toMatch(says);
  expect(run.stdout).not.toMatch(TOKEN);
  expect(`${run.stdout}\n${run.stderr}`.split('\n').filter((line) => /^\s+at /.test(line))).toEqual([]);
}

/** Starting a server (twice, in the first case) takes more than the suite's 30 s per test on a busy machine. */
const STARTS = { timeout: 120_000 };

describe.runIf(testEngine === 'sqlite')('SQLite at start', STARTS, () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'plant-store-database-start-'));
    // Traversable by the unprivileged user the permission cases run as.
    chmodSync(root, 0o755);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A folder of its own for one case, open to everyone unless `mode` says otherwise. */
  const folder = (name: string, mode = 0o777) => {
    const dir = path.join(root, name);
    mkdirSync(dir);
    chmodSync(dir, mode);
    return dir;
  };

  it('serves on the default DATABASE_URL in an empty folder on the first start, with the token, and on the second without one', async () => {
    // What `npm ci && npm start` meets on a fresh clone: no DATABASE_URL, no data/ folder.
    const cwd = folder('fresh-clone', 0o755);
    const first = start('server.mjs', { cwd, env: { DATABASE_URL: null } });
    expect(await first.serving(), first.output()).toBe(true);
    expect(first.stdout()).toMatch(TOKEN);
    expect(existsSync(path.join(cwd, 'data', 'plants.db'))).toBe(true);
    expect((await first.stop()).code).toBe(0);

    const second = start('server.mjs', { cwd, env: { DATABASE_URL: null } });
    expect(await second.serving(), second.output()).toBe(true);
    expect(second.stdout()).not.toMatch(TOKEN);
    expect(second.stdout()).toContain('database is up to date');
    expect((await second.stop()).code).toBe(0);
  });

  it('makes the database its owner’s alone: the file, its -wal and -shm 0600, the folders it creates 0700; an operator’s own modes stay', async () => {
    const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);
    const dir = folder('private', 0o755);
    const file = path.join(dir, 'data', 'deeper', 'plants.db');
    const server = start('server.mjs', { cwd: root, env: { DATABASE_URL: `file:${file}` } });
    expect(await server.serving(), server.output()).toBe(true);
    // While the server runs, SQLite's -wal and -shm are there beside the file.
    expect({ file: mode(file), wal: mode(`${file}-wal`), shm: mode(`${file}-shm`) }).toEqual({ file: '600', wal: '600', shm: '600' });
    expect({ data: mode(path.join(dir, 'data')), deeper: mode(path.dirname(file)) }).toEqual({ data: '700', deeper: '700' });
    expect((await server.stop()).code).toBe(0);

    // A file and folder the operator made, with modes of their own (a group that reads backups), keep them.
    const own = path.join(folder('operators-own', 0o750), 'plants.db');
    writeFileSync(own, '');
    chmodSync(own, 0o640);
    const onOwn = start('server.mjs', { cwd: root, env: { DATABASE_URL: `file:${own}` } });
    expect(await onOwn.serving(), onOwn.output()).toBe(true);
    expect({ file: mode(own), wal: mode(`${own}-wal`), folder: mode(path.dirname(own)) }).toEqual({ file: '640', wal: '640', folder: '750' });
    expect((await onOwn.stop()).code).toBe(0);
  });

  it('creates the folders a DATABASE_URL names when they are missing', async () => {
    const file = path.join(folder('missing'), 'a', 'b', 'plants.db');
    const server = start('server.mjs', { cwd: root, env: { DATABASE_URL: `file:${file}` } });
    expect(await server.serving(), server.output()).toBe(true);
    expect(server.stdout()).toMatch(TOKEN);
    expect(existsSync(file)).toBe(true);
    expect((await server.stop()).code).toBe(0);
  });

  it('stops with one line when a file stands where the folder must be', async () => {
    const blocking = path.join(folder('file-in-the-way'), 'plants');
    writeFileSync(blocking, 'a file, not a folder\n');
    const url = `file:${path.join(blocking, 'plants.db')}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url } }).exit;
    expectOneLineRefusal(run, { url, says: `cannot create the folder ${blocking}: ${blocking} is a file, not a folder` });
  });

  it('stops with one line when the folder cannot be created (no permission)', async () => {
    const locked = folder('locked-parent', 0o555);
    const url = `file:${path.join(locked, 'data', 'plants.db')}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url }, as: unprivileged }).exit;
    expectOneLineRefusal(run, { url, says: `cannot create the folder ${path.join(locked, 'data')}: permission denied` });
  });

  it('stops with one line when the folder exists but cannot be written', async () => {
    const locked = folder('locked-folder', 0o555);
    const url = `file:${path.join(locked, 'plants.db')}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url }, as: unprivileged }).exit;
    expectOneLineRefusal(run, { url, says: `cannot create ${path.join(locked, 'plants.db')}: the folder ${locked} is not writable` });
  });

  it('stops with one line when the file is not a SQLite database (a text file), and leaves it as it was', async () => {
    const file = path.join(folder('text-file'), 'plants.db');
    writeFileSync(file, 'notes, not a database\n');
    const url = `file:${file}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url } }).exit;
    expectOneLineRefusal(run, { url, says: `${file} is not a SQLite database` });
    expect(readFileSync(file, 'utf8')).toBe('notes, not a database\n');
  });

  it('stops with one line when the database file is read-only', async () => {
    const file = path.join(folder('read-only-file'), 'plants.db');
    new Database(file).close();
    chmodSync(file, 0o444);
    const url = `file:${file}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url }, as: unprivileged }).exit;
    expectOneLineRefusal(run, { url, says: `the database cannot be written: ${file} is read-only` });
  });

  it('stops with one line when DATABASE_URL names a folder', async () => {
    const dir = folder('a-folder');
    const url = `file:${dir}`;
    const run = await start('server.mjs', { cwd: root, env: { DATABASE_URL: url } }).exit;
    expectOneLineRefusal(run, { url, says: `${dir} is a folder, not a database file` });
  });

  it('stops the token command with the same one line', async () => {
    const file = path.join(folder('token-text-file'), 'plants.db');
    writeFileSync(file, 'notes, not a database\n');
    const url = `file:${file}`;
    const run = await start('token.mjs', { cwd: root, env: { DATABASE_URL: url }, args: ['list'] }).exit;
    expectOneLineRefusal(run, { url, says: `${file} is not a SQLite database` });
  });
});

describe.runIf(testEngine === 'postgresql')('PostgreSQL at start', STARTS, () => {
  it('stops with one line when the server cannot be reached, never printing the password', async () => {
    const port = await freePort();
    const run = await start('server.mjs', { cwd: os.tmpdir(), env: { DATABASE_URL: `postgresql://plants:hunter2@127.0.0.1:${port}/plants?sslmode=disable` } }).exit;
    expectOneLineRefusal(run, { url: `postgresql://127.0.0.1:${port}/plants`, says: /connection refused/ });
    expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
  });

  it('stops with one line when the database does not exist on the server', async () => {
    const server = new URL(process.env.TEST_POSTGRES_URL!);
    server.pathname = '/no_such_database';
    const run = await start('server.mjs', { cwd: os.tmpdir(), env: { DATABASE_URL: server.toString() } }).exit;
    expectOneLineRefusal(run, { url: `postgresql://${server.host}/no_such_database`, says: /the database does not exist/ });
  });
});
