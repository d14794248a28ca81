/**
 * `npm run db:backup` on the suite's engine, taken from a running server under write load, and restored the
 * documented way (SQLite: the file is the database; PostgreSQL: pg_restore into an empty database): a fresh
 * server on the copy finds every write acknowledged before the backup began (tokens, plants, webhook
 * endpoints, the outbox), and the migration runner finds the copy's history complete.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createOver } from '@test-support/api-fixture';
import { registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';
import { testBuildDir } from '@test-support/build';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { majorVersion, postgresClientTools, postgresServerBinaries, versionOf } from '@/tooling/machine.mjs';
import { api } from '@test-support/http-client';
import { freePort } from '@test-support/processes';
import { type RunningServer, startServer } from '@test-support/server-process';
import { runCommand } from '@test-support/token-command';

const servers: RunningServer[] = [];
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
  await Promise.all(databases.map((database) => database.drop()));
});

const ids = (rows: { id: unknown }[]) => new Set(rows.map((row) => String(row.id)));

/**
 * On PostgreSQL the backup is pg_dump's and the restore pg_restore's, the client tools of the system, which npm
 * cannot bring: without them, or with ones older than the suite's server (whose archive they refuse to write), the
 * tests are skipped, as `npm test`'s preflight says. CI installs them.
 */
const server = postgresServerBinaries();
const serverMajor = server && majorVersion(versionOf(path.join(server.binDir, 'postgres')));
const clientTools = testEngine === 'postgresql' ? postgresClientTools() : undefined;
const withoutClientTools = testEngine === 'postgresql' && (clientTools === undefined || (serverMajor !== undefined && clientTools.major < serverMajor));

describe(`npm run db:backup (${testEngine})`, () => {
  it.skipIf(withoutClientTools)('writes the backup for its owner alone: the file 0600, the folders it creates 0700', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const migrate = await runCommand(process.execPath, [path.join(testBuildDir, 'migrate.mjs')], { DATABASE_URL: database.url });
    expect(migrate.code, migrate.stderr).toBe(0);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-backup-modes-'));
    try {
      const file = path.join(root, 'backups', 'nightly', 'plants.backup');
      const backup = await runCommand(process.execPath, [path.join(testBuildDir, 'backup.mjs'), file], { DATABASE_URL: database.url });
      expect(backup.code, backup.stderr).toBe(0);
      const mode = (entry: string) => (fs.statSync(entry).mode & 0o777).toString(8);
      // Under the usual umask (022) a file SQLite or pg_dump creates is 0644, readable by every user of the machine.
      expect({ file: mode(file), nightly: mode(path.dirname(file)), backups: mode(path.join(root, 'backups')) }).toEqual({ file: '600', nightly: '700', backups: '700' });
      expect(fs.readdirSync(path.dirname(file))).toEqual(['plants.backup']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(withoutClientTools)('copies a running server’s database under writes: a server on the restored copy has every write acknowledged before it began', { timeout: 180_000 }, async () => {
    const env = webhookEnv();
    const original = await startServer({ env });
    servers.push(original);
    const admin = api(original.baseUrl, original.adminToken);
    const member = await original.createToken('backed-up-member', 'member');
    // Nothing listens there: every delivery stays in the outbox (retrying), which is what the copy must keep.
    const endpoint = await registerEndpoint(admin, `http://127.0.0.1:${await freePort()}/hook`, ['plant.created']);

    const acknowledged: { id: bigint; at: number }[] = [];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    let stopped = false;
    let nextId = 7_000_000_001n;
    const writers = Array.from({ length: 8 }, async () => {
      while (!stopped) {
        const id = nextId++;
        if ((await createOver(agent, original.baseUrl, original.adminToken, id, { name: 'backed up', timeoutMs: 30_000 })) === 200) acknowledged.push({ id, at: performance.now() });
      }
    });
    try {
      // Writes are going on; wait for some to be acknowledged (a condition, not a clock).
      while (acknowledged.length < 40) await new Promise((resolve) => setTimeout(resolve, 20));

      const copy = await createTestDatabase();
      databases.push(copy);
      const file = testEngine === 'sqlite' ? copy.url.slice('file:'.length) : path.join(os.tmpdir(), `plant-store-backup-${process.pid}-${Date.now()}.dump`);
      const beganAt = performance.now();
      const before = new Set(acknowledged.filter((write) => write.at <= beganAt).map((write) => String(write.id)));
      const outboxBefore = ids(await original.database.query<{ id: unknown }>('SELECT id FROM "WebhookDelivery"'));
      const backup = await runCommand(process.execPath, [path.join(testBuildDir, 'backup.mjs'), file], { DATABASE_URL: original.databaseUrl });
      const endedAt = performance.now();
      expect(backup.stderr).toBe('');
      expect(backup.code).toBe(0);
      expect(backup.stdout).toMatch(testEngine === 'sqlite' ? /integrity_check: ok/ : /pg_restore --list: readable/);
      // The point of the test: the server went on acknowledging writes while the backup ran.
      expect(acknowledged.some((write) => write.at > beganAt && write.at < endedAt), 'a write acknowledged during the backup').toBe(true);
      stopped = true;
      await Promise.all(writers);

      if (testEngine === 'postgresql') {
        // The documented restore: into an empty database, objects owned by whoever restores.
        const restore = await runCommand('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${copy.url}`, file], {});
        fs.rmSync(file, { force: true });
        expect(restore.stderr).toBe('');
        expect(restore.code).toBe(0);
      }

      // The migration runner's check: the copy's history is complete and clean.
      const migrate = await runCommand(process.execPath, [path.join(testBuildDir, 'migrate.mjs')], { DATABASE_URL: copy.url });
      expect(migrate.code, migrate.stderr).toBe(0);
      expect(migrate.stdout).toContain('database is up to date');

      // The outbox as it was when the backup began (read before the new server's worker touches it).
      const outboxCopy = ids(await copy.query<{ id: unknown }>('SELECT id FROM "WebhookDelivery"'));
      expect([...outboxBefore].filter((id) => !outboxCopy.has(id))).toEqual([]);
      expect(outboxBefore.size).toBeGreaterThanOrEqual(before.size);

      const plantsCopy = ids(await copy.query<{ id: unknown }>('SELECT id FROM "Plant"'));
      console.log(`[backup] ${before.size} acknowledged before, ${plantsCopy.size} in the copy, ${acknowledged.length} in all`);
      expect(before.size).toBeGreaterThanOrEqual(40);
      expect([...before].filter((id) => !plantsCopy.has(id)), 'acknowledged before the backup, missing from the copy').toEqual([]);

      await original.stop();
      const restored = await startServer({ database: copy, env });
      servers.push(restored);
      // The tokens: the first admin's and one issued later both still sign in.
      const restoredAdmin = api(restored.baseUrl, original.adminToken);
      const endpoints = await restoredAdmin.get('/api/webhooks/endpoints');
      expect(endpoints.status).toBe(200);
      expect(JSON.stringify(endpoints.json, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).toContain(`"id":"${endpoint.id}"`);
      const list = await api(restored.baseUrl, member.token).get('/api/plants?limit=1');
      expect(list.status).toBe(200);
    } finally {
      stopped = true;
      await Promise.all(writers);
      agent.destroy();
    }
  });
});
