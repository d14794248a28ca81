import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { pageHeaders } from './guards/security-headers';
import type { ServerResponse } from 'node:http';

import type { Logger } from '@/server/log';
import { withoutTrailingSlashes } from '@/shared/text';

import type { FrontRequest } from './request';
import { type Reply, writeReply } from './reply';
import { noneMatch } from './rest/conditional';

const TYPES = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.txt', 'text/plain; charset=utf-8'],
  ['.json', 'application/json'],
  ['.webmanifest', 'application/manifest+json'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.ico', 'image/x-icon'],
  ['.woff2', 'font/woff2'],
]);

type Page = { status: number; headers: Record<string, string>; body: Buffer; notModified?: Reply };

/** The SHA-256 of each inline script of a page, for its CSP: Next.js writes a few (its bootstrap and the RSC payload). */
export function inlineScriptHashes(html: string): string[] {
  const hashes = new Set<string>();
  for (const [, attributes, content] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(attributes!)) continue;
    hashes.add(createHash('sha256').update(content!, 'utf8').digest('base64'));
  }
  return [...hashes];
}

function* filesUnder(folder: string, prefix = ''): Generator<string> {
  for (const entry of readdirSync(path.join(folder, prefix), { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) yield* filesUnder(folder, relative);
    else yield relative;
  }
}

/**
 * The admin page as `next build` exported it, with public/ (favicon.ico, robots.txt, manifest.webmanifest) copied
 * in by the build: every file read once at start and served from memory, by path (a Map, so no path is ever a
 * property lookup). `x.html` answers `/x`; hashed build files are cached for good; the others, at addresses
 * that stay the same from build to build, are revalidated on every use (`no-cache`) against their strong ETag, a
 * hash of their bytes, and answered 304 when they have not changed. Each HTML file carries a CSP that allows
 * exactly its own inline scripts, computed here from the very bytes served.
 */
export type PagesDoor = (request: FrontRequest, response: ServerResponse) => Promise<void>;

export function loadStaticPages(folder: string, log: Logger): PagesDoor {
  if (!existsSync(path.join(folder, 'index.html'))) {
    // A server-only build (`npm run build -- --server`) serves the API; the page says how to get it.
    log.warn({ folder }, 'there is no exported admin page; pages answer 503 until `npm run build` makes one');
    return async (request, response) => {
      request.trace.door = 'pages';
      const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '60', ...pageHeaders([]) };
      writeReply(response, { status: 503, headers, body: 'The admin page is not built: run npm run build.\n' }, { head: request.method === 'HEAD' });
    };
  }
  const pages = new Map<string, Page>();
  let notFound: Page | undefined;
  for (const file of filesUnder(folder)) {
    const body = readFileSync(path.join(folder, file));
    const extension = path.extname(file);
    const headers: Record<string, string> = { 'Content-Type': TYPES.get(extension) ?? 'application/octet-stream' };
    const immutable = file.startsWith('_next/static/');
    Object.assign(headers, pageHeaders(extension === '.html' ? inlineScriptHashes(body.toString('utf8')) : []), {
      'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    let notModified: Reply | undefined;
    if (!immutable) {
      headers.ETag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      notModified = { status: 304, headers: { ...headers }, body: null };
      delete notModified.headers['Content-Type'];
    }
    const page = { status: 200, headers, body, notModified };
    if (file === '404.html') {
      const { ETag: _etag, ...notFoundHeaders } = headers;
      notFound = { status: 404, headers: notFoundHeaders, body };
    }
    if (file === 'index.html') pages.set('/', page);
    else if (extension === '.html') pages.set(`/${file.slice(0, -'.html'.length)}`, page);
    pages.set(`/${file}`, page);
  }
  const missing: Page = notFound ?? { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8', ...pageHeaders([]) }, body: Buffer.from('Not found\n') };

  function pageFor(request: FrontRequest): Reply {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const headers = { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8', ...pageHeaders([]) };
      return { status: 405, headers, body: `${request.method} is not allowed here; use GET or HEAD\n` };
    }
    const pathname = request.url.pathname.length > 1 ? withoutTrailingSlashes(request.url.pathname) : '/';
    const page = pages.get(pathname) ?? missing;
    return page.notModified && page.status === 200 && noneMatch(request.raw, page.headers.ETag!) ? page.notModified : page;
  }

  return async function servePage(request, response) {
    request.trace.door = 'pages';
    writeReply(response, pageFor(request), { head: request.method === 'HEAD' });
  };
}
