/**
 * public/ as the one server serves it beside the admin page: favicon.ico, robots.txt and manifest.webmanifest,
 * and the icon.svg the pages link, each fetched as a browser or a crawler fetches it: its bytes as committed,
 * its media type, `no-cache` with a strong ETag, and a 304 without a body for a revalidation that names it. The
 * pages link the manifest, and everything the manifest names is served. Nothing here depends on the database,
 * so the PostgreSQL run of the suite skips this file.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { setupServer } from '@test-support/api-fixture';
import { projectRoot } from '@test-support/build';

const FILES = [
  { path: '/favicon.ico', file: 'public/favicon.ico', type: 'image/x-icon' },
  { path: '/robots.txt', file: 'public/robots.txt', type: 'text/plain; charset=utf-8' },
  { path: '/manifest.webmanifest', file: 'public/manifest.webmanifest', type: 'application/manifest+json' },
  { path: '/icon.svg', file: 'src/app/icon.svg', type: 'image/svg+xml' },
];

describe.skipIf(process.env.TEST_DATABASE === 'postgresql')('public/: the favicon, robots.txt and the web manifest', () => {
  const server = setupServer();
  const get = (at: string, headers: Record<string, string> = {}, method = 'GET') => fetch(`${server.baseUrl}${at}`, { method, headers });

  it.each(FILES)('serves $path: its bytes, $type, revalidated on each use and answered 304 when unchanged', async ({ path: at, file, type }) => {
    const answer = await get(at);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe(type);
    expect(Buffer.from(await answer.arrayBuffer()).equals(readFileSync(path.join(projectRoot, file)))).toBe(true);
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = answer.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{27}"$/);

    const again = await get(at, { 'If-None-Match': etag! });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('no-cache');
    expect(await again.text()).toBe('');
    expect((await get(at, { 'If-None-Match': '"another"' })).status).toBe(200);
    const head = await get(at, {}, 'HEAD');
    expect([head.status, head.headers.get('etag'), await head.text()]).toEqual([200, etag, '']);
  });

  it('asks every crawler to stay away: an API and an admin page are not for a search index', async () => {
    const robots = await (await get('/robots.txt')).text();
    expect(robots).toMatch(/^User-agent: \*\nDisallow: \/$/m);
  });

  it('links the manifest and the icon from the pages, and serves every icon the manifest names as its type', async () => {
    const page = await (await get('/')).text();
    expect(page).toMatch(/<link rel="manifest" href="\/manifest\.webmanifest"/);
    expect(page).toMatch(/<link rel="icon" href="\/icon\.svg\?[^"]*"[^>]* type="image\/svg\+xml"/);
    const manifest = (await (await get('/manifest.webmanifest')).json()) as { name: string; start_url: string; icons: { src: string; type: string }[] };
    expect(manifest.name).toBe('Plant Store');
    expect((await get(manifest.start_url)).status).toBe(200);
    for (const icon of manifest.icons) {
      const answer = await get(icon.src);
      expect([icon.src, answer.status, answer.headers.get('content-type')]).toEqual([icon.src, 200, icon.type]);
    }
  });

  it('keeps the build\'s hashed files for good, and a missing file is a 404 without an ETag', async () => {
    const page = await (await get('/')).text();
    const script = /src="(\/_next\/static\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const answer = await get(script!);
    expect([answer.status, answer.headers.get('cache-control'), answer.headers.get('etag')]).toEqual([200, 'public, max-age=31536000, immutable', null]);
    const missing = await get('/apple-touch-icon.png');
    expect([missing.status, missing.headers.get('etag')]).toEqual([404, null]);
  });
});
