/**
 * What the docs tell a user to write and run, read from the docs themselves, so that a test runs the very text
 * a user copies: code blocks marked with a file name (```ts file=plant-store-json.ts) and blocks of shell lines
 * marked with what they do (```sh run=openapi-lint).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { projectRoot } from './build';

const read = (doc: string) => readFileSync(path.join(projectRoot, doc), 'utf8');

/** Every ```<language> file=<name> block of `doc` (a path from the project's folder), by name. */
export function documentedFiles(doc: string): Map<string, string> {
  return new Map([...read(doc).matchAll(/^```[a-z]+ file=(\S+)\n([\s\S]*?)^```$/gm)].map((match) => [match[1]!, match[2]!]));
}

/** The lines of the ```sh run=<name> block of `doc`. */
export function documentedCommands(doc: string, name: string): string {
  const blocks = [...read(doc).matchAll(/^```sh run=(\S+)\n([\s\S]*?)^```$/gm)].filter((match) => match[1] === name);
  if (blocks.length !== 1) throw new Error(`${doc} has ${blocks.length} \`\`\`sh run=${name} blocks, not one`);
  return blocks[0]![2]!;
}

/**
 * The environment of a user's shell: ours, less what `npm test` and the test runner put there about this project.
 * A child npm would take `npm_config_local_prefix` as its project and install into this one; the user's own npm
 * settings (`npm_config_cache`, `npm_config_registry`, …) stay.
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const project = /^(npm_config_local_prefix|npm_config_call|npm_package_.*|npm_lifecycle_.*|npm_command|INIT_CWD|NODE_ENV|VITEST.*|TEST_.*)$/i;
  const kept = Object.entries(process.env).filter(([name]) => !project.test(name));
  return { ...Object.fromEntries(kept), ...extra } as NodeJS.ProcessEnv;
}

/** Runs shell lines as a user types them (`sh -e`: the first failure stops them); a failure shows what they printed. */
export async function runLines(lines: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  try {
    const { stdout, stderr } = await promisify(execFile)('sh', ['-e', '-c', lines], { cwd: options.cwd, env: options.env ?? userEnv(), maxBuffer: 16 * 1024 * 1024 });
    return `${stdout}${stderr}`;
  } catch (error) {
    const { stdout = '', stderr = '', code } = error as { stdout?: string; stderr?: string; code?: number };
    throw new Error(`these lines failed (exit ${code}) in ${options.cwd}:\n${lines}\n${stdout}\n${stderr}`.slice(0, 20_000));
  }
}

export type RunningLines = {
  output: () => string;
  /** Resolves with the output once `done` says it holds what is awaited; rejects on a timeout or an early exit. */
  waitFor: (done: (output: string) => boolean, what: string, timeoutMs?: number) => Promise<string>;
  /** Resolves with the exit code once the lines end by themselves. */
  exited: Promise<number | null>;
  /** Stops the lines and what they started (their own process group). */
  stop: () => Promise<void>;
};

/** Starts shell lines that run until stopped (a feed followed with curl -N), as runLines runs the others. */
export function startLines(lines: string, options: { cwd: string; env?: NodeJS.ProcessEnv }): RunningLines {
  const child = spawn('sh', ['-e', '-c', lines], { cwd: options.cwd, env: options.env ?? userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    output: () => output,
    exited,
    waitFor: (done, what, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          if (done(output)) resolve(output);
          else if (ended) reject(new Error(`these lines ended before ${what}:\n${lines}\n${output}`));
          else if (Date.now() - started > timeoutMs) reject(new Error(`no ${what} within ${timeoutMs} ms from:\n${lines}\n${output}`));
          else setTimeout(check, 50);
        };
        check();
      }),
    stop: async () => {
      if (!ended) process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}
