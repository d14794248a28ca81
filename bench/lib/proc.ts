/** Child servers: start, wait for, measure (RSS, CPU from /proc) and stop, each by its own pid. */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { waitForExit } from '@test-support/processes';

import { projectRoot } from './paths';

// The suites' helpers: one way to find a free port and to wait for a server to exit.
export { freePort } from '@test-support/processes';

/** Our environment without NODE_ENV (the servers set production themselves) and BUILD_DIR, plus `extra`. */
export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV' && name !== 'BUILD_DIR');
  return { ...Object.fromEntries(inherited), NEXT_TELEMETRY_DISABLED: '1', ...extra } as unknown as NodeJS.ProcessEnv;
}

export type Server = {
  name: string;
  pid: number;
  baseUrl: string;
  /** What it printed (stdout and stderr interleaved as they came): the first 16 KB and the last 64 KB. */
  output: () => string;
  exited: () => boolean;
  /** SIGTERM to the pid (or its process group when started as a group), then waits; SIGKILL after 15 s. */
  stop: () => Promise<void>;
  /** With `ipc`: asks bench/probe.ts inside the server and waits for its answer. */
  ask: <Answer>(question: Record<string, unknown>, timeoutMs?: number) => Promise<Answer>;
};

/**
 * Where the servers' output goes: a file each, as a server's log goes to a file or a collector in use. (A pipe
 * read by this process would charge the bench's own CPU with every log line: the app logs a line per request.)
 * Removed when the bench exits.
 */
let outputDir: string | undefined;
function outputFile(name: string): string {
  if (!outputDir) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-bench-output-'));
    outputDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  // A name may be a command line (`node .bench-build/server.mjs`): only its plain characters name the file.
  return path.join(outputDir, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`);
}

const HEAD_BYTES = 16 * 1024;
const TAIL_BYTES = 64 * 1024;

/** The start and the end of a file (a long run's log is hundreds of MB). */
function headAndTail(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const read = (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      return buffer.subarray(0, readSync(fd, buffer, 0, length, position)).toString('utf8');
    };
    if (size <= HEAD_BYTES + TAIL_BYTES) return read(0, size);
    return `${read(0, HEAD_BYTES)}\n… (${size - HEAD_BYTES - TAIL_BYTES} bytes left out) …\n${read(size - TAIL_BYTES, TAIL_BYTES)}`;
  } finally {
    closeSync(fd);
  }
}

/**
 * Spawns `command args` in the project folder (or `cwd`). `group` puts it in its own process group (for `npm start`,
 * whose server is a grandchild): stop() then signals that group, which holds only what this call started.
 */
export function startProcess(options: {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  group?: boolean;
  /** Another checkout to run in (--baseline); the project folder otherwise. */
  cwd?: string;
  /** Open an IPC channel (for bench/probe.ts). */
  ipc?: boolean;
}): Server {
  const file = outputFile(options.name);
  const fd = openSync(file, 'a');
  const child = spawn(options.command, options.args, {
    cwd: options.cwd ?? projectRoot,
    env: childEnv(options.env),
    stdio: options.ipc ? ['ignore', fd, fd, 'ipc'] : ['ignore', fd, fd],
    detached: options.group ?? false,
  });
  closeSync(fd);
  let asked = 0;
  const answers = new Map<number, (answer: Record<string, unknown>) => void>();
  child.on('message', (message: Record<string, unknown>) => answers.get(Number(message.probe))?.(message));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (options.group) process.kill(-child.pid!, name);
      else child.kill(name);
    } catch {
      // Already gone.
    }
  };
  return {
    name: options.name,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${options.port}`,
    output: () => headAndTail(file),
    exited,
    stop: async () => {
      if (!exited()) {
        signal('SIGTERM');
        if (!(await waitForExit(child, 15_000))) {
          signal('SIGKILL');
          await waitForExit(child, 5_000);
        }
      }
      if (options.group) {
        // The group's other members (npm's shell, tsx's child) may outlive the leader by a moment.
        for (let attempt = 0; attempt < 100 && groupAlive(child.pid!); attempt++) await sleep(100);
        if (groupAlive(child.pid!)) signal('SIGKILL');
      }
    },
    ask: <Answer>(question: Record<string, unknown>, timeoutMs = 120_000) =>
      new Promise<Answer>((resolve, reject) => {
        if (!options.ipc || !child.connected) return reject(new Error(`${options.name} has no IPC channel to ask`));
        const id = ++asked;
        const timer = setTimeout(() => {
          answers.delete(id);
          reject(new Error(`${options.name} did not answer ${JSON.stringify(question)} within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        answers.set(id, (answer) => {
          clearTimeout(timer);
          answers.delete(id);
          if (typeof answer.error === 'string') reject(new Error(`${options.name}: ${answer.error}`));
          else resolve(answer as Answer);
        });
        child.send({ ...question, probe: id });
      }),
  };
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * fetch for idempotent requests after a pause: a kept-alive socket that the server closes (its keep-alive
 * timeout) just as the request goes out fails with "other side closed". The retry waits for one turn of the
 * event loop first, in which the client sees every other pooled socket that went the same way (a pool holds
 * several per server: retrying at once took the next dead one), so it goes out on a live or a new socket.
 */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    await new Promise<void>((resolve) => setImmediate(resolve));
    return fetch(url, init);
  }
}

/**
 * Watches the bench's own event loop for stalls (synchronous work such as SQLite's seeding): while it takes
 * no turn, its HTTP client cannot see the servers close its kept-alive sockets. `stop()` gives the longest
 * stall in seconds, the one still going on when it is called included (a histogram of timer delays, such as
 * monitorEventLoopDelay, only records a stall once a timer has fired after it, which the last one's may not).
 */
export function watchLoopStalls(): { stop: () => number } {
  const everyMs = 100;
  let last = performance.now();
  let longestGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, everyMs);
  // A run that fails while watching (a seeding that throws) must still exit.
  tick.unref();
  return {
    stop: () => {
      clearInterval(tick);
      return Math.max(0, Math.max(longestGap, performance.now() - last) - everyMs) / 1000;
    },
  };
}

/** Polls `url` until it answers 200; returns the milliseconds from `since` (performance.now()) to that answer. */
export async function waitFor200(server: Server, path: string, since: number, timeoutMs = 120_000): Promise<number> {
  const deadline = since + timeoutMs;
  for (;;) {
    if (server.exited()) throw new Error(`${server.name} exited before answering ${path}:\n${server.output()}`);
    try {
      const response = await fetch(server.baseUrl + path, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) throw new Error(`${server.name} did not answer 200 on ${path} within ${timeoutMs / 1000} s:\n${server.output()}`);
    await sleep(20);
  }
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function statusField(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/** The pids whose parent is `pid`, and theirs (Next.js may start workers). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export type Memory = { rss: number; hwm: number };

/** VmRSS and VmHWM (peak RSS since start) in bytes, or zeros when the process is gone. */
export function memory(pid: number): Memory {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rss: statusField(status, 'VmRSS'), hwm: statusField(status, 'VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state(0) ppid(1) … utime(11) stime(12).
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of a process tree so far: the process, its live descendants, and the children it has reaped (a
 * PostgreSQL server's backends that ended meanwhile). NaN when the process is gone.
 */
export function treeCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime(11) stime(12) cutime(13) cstime(14).
    const own = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
    return descendants(pid).reduce((total, child) => total + cpuSeconds(child), own);
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds the whole machine has spent busy (all cores, from /proc/stat). */
export function machineBusySeconds(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}
