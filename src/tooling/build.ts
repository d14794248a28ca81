/**
 * `npm run build`: the production build in BUILD_DIR (default dist/), which `npm start` runs with plain
 * node, no TypeScript and no devDependencies at run time:
 *
 *   dist/pages/          the admin page, exported by `next build` (static HTML, JS, CSS)
 *   dist/server.mjs      the server (src/server/main.ts), bundled by esbuild with every module it imports
 *   dist/token.mjs       the token command (src/cli/token.ts)
 *   dist/migrate.mjs     the migration runner (src/cli/migrate.ts)
 *   dist/backup.mjs      the backup command (src/cli/backup.ts)
 *   dist/webhook-sender-thread.mjs  the thread that sends webhooks (src/server/webhooks/delivery/thread-entry.ts), which
 *                        the server starts from beside its own chunk (webhooks/delivery/thread-handle.ts)
 *   dist/*-<hash>.mjs    chunks the entries share, and the parts loaded only on demand (each engine's Prisma runtime)
 *
 * `--server` rebuilds the bundles only (the API suite needs no pages).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { build, type Plugin } from 'esbuild';

import { projectRoot } from '@/server/paths';

const buildDir = path.resolve(projectRoot, process.env.BUILD_DIR ?? 'dist');
const serverOnly = process.argv.includes('--server');

function step(name: string, run: () => void | Promise<void>) {
  const started = performance.now();
  return Promise.resolve(run()).then(() => console.log(`[build] ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`));
}

/**
 * Prisma ships each engine's query compiler as WebAssembly written out in base64 inside a JavaScript module,
 * which the generated client decodes with `Buffer.from(wasm, 'base64')`. Bundled as it is, the 4 MB module
 * stays in the heap twice (its source and the string). Here the build decodes it once into a .wasm file
 * beside the bundle, and the module exports the file's bytes instead: `Buffer.from` of a Buffer copies it,
 * so the client's code runs unchanged. The build fails if the module no longer looks as this expects.
 */
function prismaWasmAsFile(outdir: string): Plugin {
  const pattern = /query_compiler_fast_bg\.(\w+)\.wasm-base64\.mjs$/;
  return {
    name: 'prisma-wasm-as-file',
    setup(esbuild) {
      esbuild.onLoad({ filter: pattern }, (args) => {
        const engine = pattern.exec(args.path)![1]!;
        const source = readFileSync(args.path, 'utf8');
        const base64 = /^const wasm = "([A-Za-z0-9+/=]+)";\s*export \{ wasm \}/m.exec(source)?.[1];
        if (!base64) throw new Error(`${args.path} no longer exports the query compiler as a base64 string; re-check prismaWasmAsFile`);
        const file = `query_compiler_fast_bg.${engine}.wasm`;
        writeFileSync(path.join(outdir, file), Buffer.from(base64, 'base64'));
        return {
          contents: `import { readFileSync } from 'node:fs';\nexport const wasm = readFileSync(new URL(${JSON.stringify(`./${file}`)}, import.meta.url));\n`,
          loader: 'js',
        };
      });
    },
  };
}

async function bundleServer(): Promise<void> {
  // Only the bundles' own files go: the exported pages beside them stay unless they are rebuilt too.
  for (const entry of readdirSync(buildDir, { withFileTypes: true })) {
    if (entry.isFile() && /\.(mjs|map|wasm)$/.test(entry.name)) rmSync(path.join(buildDir, entry.name));
  }
  await build({
    absWorkingDir: projectRoot,
    entryPoints: {
      server: 'src/server/main.ts',
      token: 'src/cli/token.ts',
      migrate: 'src/cli/migrate.ts',
      backup: 'src/cli/backup.ts',
      'webhook-sender-thread': 'src/server/webhooks/delivery/thread-entry.ts',
    },
    outdir: buildDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // Whitespace and comments out, names kept: V8 keeps each chunk's source text for as long as the process runs
    // (lazy compilation), and one comment with a character beyond Latin-1 (an em dash) makes V8 store the whole
    // chunk as UTF-16, two bytes a character. Stack traces keep their function names; the .map beside each
    // chunk gives the source line (docs/performance.md, "Where the memory goes").
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'warning',
    // Native code stays in node_modules (better-sqlite3); pg's optional native binding is never used; Next.js
    // runs only under `npm run dev`, whose module the production entry never loads.
    external: ['better-sqlite3', 'pg-native', 'next'],
    // The marker that keeps server modules out of browser bundles is empty on the server.
    alias: { 'server-only': path.join(projectRoot, 'node_modules/server-only/empty.js') },
    // CommonJS packages inside an ES module bundle still call require for Node's built-ins.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [prismaWasmAsFile(buildDir)],
  });
}

function exportPages(): void {
  const next = path.join(projectRoot, 'node_modules', 'next', 'dist', 'bin', 'next');
  const result = spawnSync(process.execPath, [next, 'build'], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, BUILD_DIR: path.relative(projectRoot, buildDir), NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (result.status !== 0) throw new Error(`next build failed (exit ${result.status ?? result.signal})`);
}

/** When each half was built; a server-only build keeps the pages' time (the end-to-end suites read it). */
type BuildInfo = { serverBuiltAt: string; pagesBuiltAt: string | null };
const infoFile = path.join(buildDir, 'BUILD_INFO.json');
const previous: BuildInfo | undefined = existsSync(infoFile) ? JSON.parse(readFileSync(infoFile, 'utf8')) : undefined;

mkdirSync(buildDir, { recursive: true });
const startedAt = new Date().toISOString();
if (!serverOnly) {
  rmSync(path.join(buildDir, 'pages'), { recursive: true, force: true });
  await step('pages (next build, static export)', exportPages);
}
await step('server, token command and migration runner (esbuild)', bundleServer);
const info: BuildInfo = { serverBuiltAt: startedAt, pagesBuiltAt: serverOnly ? (previous?.pagesBuiltAt ?? null) : startedAt };
writeFileSync(infoFile, `${JSON.stringify(info, null, 2)}\n`);
