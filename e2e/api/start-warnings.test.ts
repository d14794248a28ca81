/**
 * A start prints no warning: Node prints a library's deprecation or a process warning once per process, to
 * standard error, and the next major version of the library makes it an error (pg 9 refuses a query sent
 * while another runs on the same client). A fresh server on the suite's engine, a few requests that open
 * several pooled connections at once and a live feed (the database's signals are heard by then), then a stop.
 */
import { expect, it } from 'vitest';

import { api } from '@test-support/http-client';
import { startServer } from '@test-support/server-process';
import { openFeed } from '@test-support/sse-feed';

const NODE_WARNING = /\(node:\d+\) (?:\[\w+\] )?\w*Warning\b/;

it('starts, serves and stops without a single warning', async () => {
  const server = await startServer();
  try {
    const admin = api(server.baseUrl, server.adminToken);
    // At once, so the pool opens connections side by side, each with its settings.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => (index % 2 === 0 ? admin.get('/api/plants') : admin.get('/api/health'))));
    for (const answer of answers) expect(answer.status).toBe(200);
    const feed = openFeed(server.baseUrl, server.adminToken);
    await feed.ready;
    feed.close();
  } finally {
    await server.stop();
  }
  const warnings = server.log().split('\n').filter((line) => NODE_WARNING.test(line));
  expect(warnings, server.stderr()).toEqual([]);
});
