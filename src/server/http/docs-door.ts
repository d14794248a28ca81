import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

import { DOCS_HEADERS } from './guards/security-headers';
import type { FrontRequest } from './request';
import { noSuchPath, type Reply, refuse } from './reply';

export const DOCS_BASE_PATH = '/api/docs';

/**
 * Interactive API docs from the project's own copy of Swagger UI: no CDN, since the service runs on
 * closed networks. The page script is a file, not inline, so the docs' CSP needs no inline scripts.
 */
const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Plant Store API</title>
  <link rel="stylesheet" href="${DOCS_BASE_PATH}/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_BASE_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_BASE_PATH}/start.js"></script>
</body>
</html>`;

/**
 * Swagger UI shows a JSON answer by parsing and re-writing it, which rounds an int64 id to the nearest
 * double (9223372036854775807 became 9223372036854776000, and pasting that into DELETE was a 400). On this
 * page only, JSON.parse keeps every integer that a double cannot hold as its own digits: the reviver sees
 * the number's source text and hands back JSON.rawJSON of it, which JSON.stringify writes out unchanged.
 * Browsers without JSON.rawJSON (older than Chrome 114, Firefox 135, Safari 18.4) keep the plain parse.
 */
const start = `(() => {
  const parse = JSON.parse;
  if (typeof JSON.rawJSON === 'function') {
    JSON.parse = function (text, reviver) {
      if (reviver !== undefined) return parse(text, reviver);
      return parse(text, (key, value, context) =>
        typeof value === 'number' && !Number.isSafeInteger(value) && context && /^-?\\d+$/.test(context.source) ? JSON.rawJSON(context.source) : value);
    };
  }
  window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });
})();`;

const HTML = 'text/html; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** What the docs serve, by path: a Map, so a sub-path such as `constructor` is only ever a missing key. */
const assets = new Map<string, { type: string; load: () => Promise<string | Buffer> }>([
  ['', { type: HTML, load: async () => page }],
  ['/start.js', { type: JS, load: async () => start }],
  ['/swagger-ui.css', { type: CSS, load: () => readSwaggerFile('swagger-ui.css') }],
  ['/swagger-ui-bundle.js', { type: JS, load: () => readSwaggerFile('swagger-ui-bundle.js') }],
]);

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const loaded = new Map<string, Promise<Buffer>>();
function readSwaggerFile(name: string): Promise<Buffer> {
  let file = loaded.get(name);
  if (!file) {
    file = readFile(path.join(swaggerDir, name));
    loaded.set(name, file);
    file.catch(() => loaded.delete(name));
  }
  return file;
}

export async function serveDocs(request: FrontRequest): Promise<Reply> {
  request.trace.door = 'docs';
  const { pathname } = request.url;
  const asset = assets.get(pathname.slice(DOCS_BASE_PATH.length));
  if (!asset) throw noSuchPath(pathname);
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    throw refuse('methodNotAllowed', `${request.method} is not allowed on ${pathname}; use GET, HEAD`, { Allow: 'GET, HEAD' });
  }
  const headers: Record<string, string> = { ...DOCS_HEADERS, 'Content-Type': asset.type };
  if (asset.type !== HTML) headers['Cache-Control'] = 'public, max-age=86400';
  return { status: 200, headers, body: await asset.load() };
}
