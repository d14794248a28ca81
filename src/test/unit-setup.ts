// Each unit test file gets a fresh SQLite file of its own, migrated by the project's runner, before the
// data layer opens it: the tests speak to a real database, never a mock.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { applyMigrations } from '@/server/db/migrate';

const directory = mkdtempSync(path.join(tmpdir(), 'plant-store-unit-'));
process.env.DATABASE_URL = `file:${path.join(directory, 'unit.db')}`;
await applyMigrations({ databaseUrl: process.env.DATABASE_URL, log: () => {} });

// Webhooks on, with a fixed test key; URLs must be public https unless a test says otherwise (the worker
// tests hand their policy to the worker directly).
process.env.WEBHOOKS_SECRET_KEY ??= Buffer.alloc(32, 7).toString('base64');
