// Test support: several processes that apply the migrations to one database at the same instant, as several
// instances (or a deploy beside a running start) do. Used by the runner's tests on both engines.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const migrateModulePath = path.join(projectRoot, 'src', 'server', 'db', 'migrate.ts');

/** A bound against a runner that hangs; reaching it fails the test with the runners' output. */
const RUNNER_TIMEOUT_MS = 120_000;

type Runner = { ready: Promise<void>; go: () => void; done: Promise<string[]> };

function startRunner(runnerPath: string, databaseUrl: string): Runner {
  const child = spawn(process.execPath, ['--import', 'tsx', runnerPath, databaseUrl], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // A runner that already died cannot hear "go"; its exit reports why.
  child.stdin.on('error', () => {});
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) onReady();
  });
  const done = new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), RUNNER_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const result = stdout.split('\n')[1];
      if (code === 0 && result) resolve(JSON.parse(result) as string[]);
      else reject(new Error(`a migration runner exited with ${code ?? signal}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`));
    });
  });
  // A runner that dies before it is ready must not leave the others waiting for it.
  void done.catch(onReady);
  return { ready, go: () => child.stdin.end('go\n'), done };
}

/**
 * Starts `processes` runners on `databaseUrl`. Each loads the runner, says it is ready, and waits; once all are
 * ready (however long a busy machine takes to load them) each is told to go at the same moment, and applies
 * the migrations. Resolves to what each applied.
 */
export async function applyMigrationsInProcesses(databaseUrl: string, processes: number): Promise<string[][]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-migration-race-'));
  try {
    const runnerPath = path.join(dir, 'runner.mjs');
    fs.writeFileSync(
      runnerPath,
      `import { applyMigrations } from ${JSON.stringify(migrateModulePath)};
const [databaseUrl] = process.argv.slice(2);
process.stdout.write('ready\\n');
process.stdin.setEncoding('utf8');
let heard = '';
for await (const chunk of process.stdin) heard += chunk;
if (heard !== 'go\\n') throw new Error('told ' + JSON.stringify(heard) + ' instead of go');
const { applied } = await applyMigrations({ databaseUrl, log: () => {} });
process.stdout.write(JSON.stringify(applied) + '\\n');
`,
    );
    const runners = Array.from({ length: processes }, () => startRunner(runnerPath, databaseUrl));
    await Promise.all(runners.map((runner) => runner.ready));
    for (const runner of runners) runner.go();
    return await Promise.all(runners.map((runner) => runner.done));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
