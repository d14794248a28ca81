/**
 * The app's PostgreSQL connections as an operator sets them up: libpq's PGOPTIONS (which the pg driver reads
 * too) reaches every connection the app opens. The app's own settings for its statements (no JIT, no parallel
 * workers; src/server/db/client.ts) are SET on each new connection, not sent as startup options, which would
 * replace PGOPTIONS, and which PgBouncer and other poolers refuse.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { api } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

const servers: RunningServer[] = [];
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const server of servers) await server.stop();
  await Promise.all(databases.map((database) => database.drop()));
});

describe.runIf(testEngine === 'postgresql')("the operator's PGOPTIONS", () => {
  it('reach the connections the app opens: told read-only by them, the server still reads and refuses to write', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    databases.push(database);
    // A first start migrates the database and prints the admin's token.
    const first = await startServer({ database });
    servers.push(first);
    const admin = api(first.baseUrl, first.adminToken);
    expect((await admin.post('/api/plants', JSON.stringify({ id: 1, name: 'before' }))).status).toBe(200);
    await first.stop();

    const readOnly = await startServer({ database, env: { PGOPTIONS: '-c default_transaction_read_only=on' } });
    servers.push(readOnly);
    const client = api(readOnly.baseUrl, first.adminToken);
    const list = await client.get('/api/plants');
    expect(list.status).toBe(200);
    expect(list.text).toContain('"before"');
    const create = await client.post('/api/plants', JSON.stringify({ id: 2, name: 'after' }));
    expect(create.status).toBeGreaterThanOrEqual(500);
    expect(readOnly.log()).toMatch(/read-only transaction/);
  });
});
