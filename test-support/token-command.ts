/**
 * The token command as the suites run it: the built `token.mjs` of the test build, on one database, its
 * output collected. `createTokenWithCli` reads the token off the last line, as scripts do.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

import { childEnv, projectRoot, testBuildDir } from './build';

const TOKEN_LINE = /^pst_[A-Za-z0-9_-]{43}$/;

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

/** Runs the built token command (what `npm run --silent token -- …` runs) against one database. */
export function runTokenCli(databaseUrl: string, args: string[]): Promise<CliResult> {
  return runCommand(process.execPath, [path.join(testBuildDir, 'token.mjs'), ...args], { DATABASE_URL: databaseUrl });
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
