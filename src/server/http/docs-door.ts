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
  <meta name="color-scheme" content="light dark">
  <title>Plant Store API</title>
  <link rel="icon" href="${DOCS_BASE_PATH}/icon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="${DOCS_BASE_PATH}/swagger-ui.css">
  <link rel="stylesheet" href="${DOCS_BASE_PATH}/page.css">
</head>
<body>
  <nav class="docs-bar" aria-label="Plant Store"><a href="/plants">← Plant Store admin page</a></nav>
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

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The admin page's mark, so the docs' tab looks like the service's. */
const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f6b4f"/><path d="M16 26V14" stroke="#fff" stroke-width="2.2" stroke-linecap="round"/><path d="M16 16c0-5 3-8 8-8 0 5-3 8-8 8z" fill="#cfe6d8"/><path d="M16 19c0-4-3-7-8-7 0 4 3 7 8 7z" fill="#fff"/></svg>`;

/**
 * The bar with the way back to the admin page, and dark mode when the system asks for it: Swagger UI has no
 * dark theme of its own, so its page is inverted and turned back round the colour wheel (which keeps its
 * method colours recognisable), and pictures are inverted back.
 */
const pageCss = `.docs-bar { padding: 0.6rem 1rem; font: 15px/1.5 system-ui, sans-serif; border-bottom: 1px solid #dde2db; }
.docs-bar a { color: #245740; font-weight: 600; }
@media (prefers-color-scheme: dark) {
  html { background: #0f1412; }
  body { background: #f0efec; filter: invert(0.92) hue-rotate(180deg); }
  .swagger-ui img, .swagger-ui .microlight { filter: invert(1) hue-rotate(180deg); }
}`;

const HTML = 'text/html; charset=utf-8';
const SVG = 'image/svg+xml';

/** What the docs serve, by path: a Map, so a sub-path such as `constructor` is only ever a missing key. */
const assets = new Map<string, { type: string; load: () => Promise<string | Buffer> }>([
  ['', { type: HTML, load: async () => page }],
  ['/start.js', { type: JS, load: async () => start }],
  ['/page.css', { type: CSS, load: async () => pageCss }],
  ['/icon.svg', { type: SVG, load: async () => icon }],
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
