// Each unit test file gets a fresh SQLite file of its own, opened the way the server opens its database
// (migrations first, then the client): the tests speak to a real database, never a mock.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { config } from '@/server/config';
import { openDatabase } from '@/server/db/client';
import { configureTokenCache } from '@/server/tokens/cache';
import { configureWebhookService } from '@/server/webhooks/settings';

const directory = mkdtempSync(path.join(tmpdir(), 'plant-store-unit-'));
process.env.DATABASE_URL = `file:${path.join(directory, 'unit.db')}`;
// Webhooks on, with a fixed test key; URLs must be public https unless a test says otherwise (the worker
// tests hand their policy to the worker directly).
process.env.WEBHOOKS_SECRET_KEY ??= Buffer.alloc(32, 7).toString('base64');
const settings = config();
await openDatabase(settings, { log: () => {} });
// Handed down as main.ts hands them down (docs/decisions/0001-configuration.md).
configureTokenCache({ ttlMs: settings.AUTH_CACHE_TTL_MS });
configureWebhookService({ key: settings.WEBHOOKS_SECRET_KEY, policy: { allowHttp: settings.WEBHOOKS_ALLOW_HTTP, allowPrivate: settings.WEBHOOKS_ALLOW_PRIVATE } });
