import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { getAbsoluteFSPath } from 'swagger-ui-dist';

import { handleRestRequest } from '@/server/rest/handler';

/**
 * Interactive API docs from the project's own copy of Swagger UI: no CDN, since the service runs on closed
 * networks. The page script is a file, not inline, so a strict Content-Security-Policy can hold.
 */
const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Plant Store API</title>
  <link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/swagger-ui-bundle.js"></script>
  <script src="/api/docs/start.js"></script>
</body>
</html>`;

const start = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

export async function GET(request: Request, { params }: { params: Promise<{ asset?: string[] }> }) {
  const asset = (await params).asset?.join('/');
  if (asset === undefined) return new Response(page, { headers: { 'Content-Type': 'text/html; charset=utf-8' } });
  if (asset === 'start.js') return new Response(start, { headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
  const contentType = assets[asset];
  if (!contentType) return handleRestRequest(request);
  const file = await readFile(path.join(getAbsoluteFSPath(), asset));
  return new Response(file, { headers: { 'Content-Type': contentType, 'Cache-Control': 'public, max-age=86400' } });
}
