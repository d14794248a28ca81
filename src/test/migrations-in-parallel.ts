// Test support: several processes that apply the migrations to one database at the same instant, as several
// instances (or a deploy beside a running start) do. Used by the runner's tests on both engines.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const migrateModulePath = path.join(projectRoot, 'src', 'server', 'db', 'migrate.ts');

/**
 * Starts `processes` runners on `databaseUrl`; each sleeps until one shared instant `startInMs` from now
 * (long enough for all of them to have loaded), then applies the migrations. Resolves to what each applied.
 */
export async function applyMigrationsInProcesses(databaseUrl: string, processes: number, startInMs: number): Promise<string[][]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-migration-race-'));
  try {
    const runnerPath = path.join(dir, 'runner.mjs');
    fs.writeFileSync(
      runnerPath,
      `import { applyMigrations } from ${JSON.stringify(migrateModulePath)};
const [startAt, databaseUrl] = process.argv.slice(2);
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, Number(startAt) - Date.now()));
const { applied } = await applyMigrations({ databaseUrl, log: () => {} });
console.log(JSON.stringify(applied));
`,
    );
    const startAt = String(Date.now() + startInMs);
    const runs = Array.from({ length: processes }, () =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', runnerPath, startAt, databaseUrl], { cwd: projectRoot }),
    );
    return (await Promise.all(runs)).map(({ stdout }) => JSON.parse(stdout) as string[]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
