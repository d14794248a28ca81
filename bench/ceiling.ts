/**
 * The ceiling, for `--floor-check`: node:http answering every request with one fixed body (CEILING_BODY: a
 * page of 20 plants, as the floor answers it) and the floor's headers, with no token check, no database and
 * no JSON building. What the floor reaches of this is how close it is to what node:http itself allows on
 * this machine under the same client; the rest is the contract's work (SHA-256, SQLite, JSON).
 *
 *   CEILING_BODY='[…]' PORT=4000 node .bench-build/bench/ceiling.mjs
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { API_HEADERS } from './api-headers';

const body = process.env.CEILING_BODY ?? '[]';
const link = process.env.CEILING_LINK ?? '</api/plants?limit=20&after=1>; rel="next"';
const length = String(Buffer.byteLength(body));
const port = Number(process.env.PORT ?? 4000);
const hostname = process.env.HOSTNAME_TO_BIND ?? '127.0.0.1';

const HEADERS = [
  ...API_HEADERS,
  'Content-Type', 'application/json',
  'Link', link,
  'Content-Length', length,
];

const server = createServer((_request, response) => {
  response.writeHead(200, ['X-Request-Id', randomUUID(), ...HEADERS]);
  response.end(body);
});
server.listen(port, hostname, () => console.log(`ceiling is serving on http://${hostname}:${port}`));

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 2_000).unref();
  });
}
