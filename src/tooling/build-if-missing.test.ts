/**
 * `npm start`'s pre-step, run as it is (plain node, its real file) inside a throwaway project whose "tsx" only
 * records how it was asked to build: a fresh clone builds everything, a pull that changed the server rebuilds
 * the server alone, one that changed the pages rebuilds everything, a current build starts as it is, and where
 * the tools are gone a stale build is refused rather than started.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const tooling = import.meta.dirname;
let root: string;

function write(file: string, content = '') {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), content);
}

/** A build made at `builtAt`, every source older than it. */
function builtAt(builtAt: Date, pagesBuilt = true) {
  write('dist/BUILD_INFO.json', JSON.stringify({ serverBuiltAt: builtAt.toISOString(), pagesBuiltAt: pagesBuilt ? builtAt.toISOString() : null }));
}

/** Writes `file` and stamps it, and the folders it is in, with `at` (git stamps what it writes; folders change with their entries). */
function touch(file: string, at: Date) {
  write(file, 'changed');
  for (let entry = file; entry !== '.'; entry = path.dirname(entry)) utimesSync(path.join(root, entry), at, at);
}

function preStart() {
  const run = spawnSync(process.execPath, [path.join(root, 'src/tooling/build-if-missing.mjs')], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH } as unknown as NodeJS.ProcessEnv });
  const asked = path.join(root, 'build-asked');
  return { status: run.status, stderr: run.stderr, build: existsSync(asked) ? readFileSync(asked, 'utf8') : undefined };
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'build-if-missing-'));
  for (const file of ['build-if-missing.mjs', 'build-inputs.mjs']) {
    mkdirSync(path.join(root, 'src/tooling'), { recursive: true });
    copyFileSync(path.join(tooling, file), path.join(root, 'src/tooling', file));
  }
  const old = new Date(Date.now() - 3_600_000);
  for (const file of ['src/server/main.ts', 'src/ui/PlantsView.tsx', 'package-lock.json']) touch(file, old);
  write('node_modules/tsx/dist/cli.mjs', "import { writeFileSync } from 'node:fs';\nwriteFileSync('build-asked', process.argv.slice(2).join(' '));\n");
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('before npm start', () => {
  it('builds everything on a fresh clone', () => {
    const result = preStart();
    expect(result).toMatchObject({ status: 0, build: 'src/tooling/build.ts' });
    expect(result.stderr).toContain('No build in dist yet');
  });

  it('starts a build that is newer than every source as it is', () => {
    builtAt(new Date());
    expect(preStart()).toMatchObject({ status: 0, build: undefined });
  });

  it('rebuilds only the server when a pull changed server code', () => {
    builtAt(new Date(Date.now() - 60_000));
    touch('src/server/main.ts', new Date());
    const result = preStart();
    expect(result).toMatchObject({ status: 0, build: 'src/tooling/build.ts --server' });
    expect(result.stderr).toContain('older than src/server');
  });

  it('rebuilds everything when a pull changed the pages or the lock file', () => {
    builtAt(new Date(Date.now() - 60_000));
    touch('package-lock.json', new Date());
    expect(preStart()).toMatchObject({ status: 0, build: 'src/tooling/build.ts' });
  });

  it('rebuilds everything when the build has no pages (a server-only build)', () => {
    builtAt(new Date(), false);
    const result = preStart();
    expect(result).toMatchObject({ status: 0, build: 'src/tooling/build.ts' });
    expect(result.stderr).toContain('has no admin pages');
  });

  it('refuses to start a stale build where the tools to rebuild it are gone', () => {
    builtAt(new Date(Date.now() - 60_000));
    touch('src/server/main.ts', new Date());
    rmSync(path.join(root, 'node_modules'), { recursive: true });
    const result = preStart();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('older than src/server, and the tools to make one are not installed: run npm ci && npm run build.');
  });

  it('starts a pruned production install, whose package-lock.json npm prune rewrote after the build', () => {
    builtAt(new Date(Date.now() - 60_000));
    touch('package-lock.json', new Date());
    rmSync(path.join(root, 'node_modules'), { recursive: true });
    expect(preStart()).toMatchObject({ status: 0, build: undefined });
  });

  it('starts a build shipped without its sources (nothing to compare against)', () => {
    builtAt(new Date(Date.now() - 60_000));
    rmSync(path.join(root, 'src/server'), { recursive: true });
    rmSync(path.join(root, 'src/ui'), { recursive: true });
    expect(preStart()).toMatchObject({ status: 0, build: undefined });
  });
});
