import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { pageHeaders } from './guards/security-headers';
import type { ServerResponse } from 'node:http';

import type { Logger } from '@/server/log';
import { withoutTrailingSlashes } from '@/shared/text';

import type { FrontRequest } from './request';
import { type Reply, writeReply } from './reply';

const TYPES = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.txt', 'text/plain; charset=utf-8'],
  ['.json', 'application/json'],
  ['.svg', 'image/svg+xml'],
  ['.png', 'image/png'],
  ['.ico', 'image/x-icon'],
  ['.woff2', 'font/woff2'],
]);

type Page = { status: number; headers: Record<string, string>; body: Buffer };

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
 * The admin page as `next build` exported it: every file read once at start and served from memory, by
 * path (a Map, so no path is ever a property lookup). `x.html` answers `/x`; hashed build files are
 * cached for good; each HTML file carries a CSP that allows exactly its own inline scripts, computed here
 * from the very bytes served.
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
    if (extension === '.html') {
      Object.assign(headers, pageHeaders(inlineScriptHashes(body.toString('utf8'))), { 'Cache-Control': 'no-cache' });
    } else {
      Object.assign(headers, pageHeaders([]), {
        'Cache-Control': file.startsWith('_next/static/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      });
    }
    const page = { status: 200, headers, body };
    if (file === '404.html') notFound = { ...page, status: 404 };
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
    return pages.get(pathname) ?? missing;
  }

  return async function servePage(request, response) {
    request.trace.door = 'pages';
    writeReply(response, pageFor(request), { head: request.method === 'HEAD' });
  };
}
