import next from 'next';

import { pageHeaders } from './guards/security-headers';
import type { PagesDoor } from './pages';

/**
 * `npm run dev`: the pages from Next.js's development server (hot reload) inside this process, behind the
 * same front as in production; only the page CSP loosens for hot reload. Never part of the production
 * bundle: production serves the static export (pages.ts).
 */
export async function startDevPages(projectRoot: string): Promise<PagesDoor> {
  const app = next({ dev: true, dir: projectRoot });
  await app.prepare();
  const handle = app.getRequestHandler();
  const headers = pageHeaders([], { dev: true });
  return async (request, response) => {
    request.trace.door = 'pages';
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    await handle(request.raw, response);
  };
}
