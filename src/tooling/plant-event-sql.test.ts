import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';
import { eventPayload } from '@/server/webhooks/outbox';
import { INT64_MAX, INT64_MIN, type Plant } from '@/shared/plants';

import { latestWebhookOutboxMigration, webhookOutboxSql, webhookPayloadMembers, writesDeclaredFields } from './plant-event-sql';

/**
 * The webhook triggers' SQL as the migration helper writes it for the declared plant fields: the same events,
 * byte for byte, as the hand-written triggers of the latest migrations (SQLite run, PostgreSQL compared as text).
 */

const { migrationsDir: sqliteMigrations } = engineLayouts.sqlite;
const { migrationsDir: postgresqlMigrations } = engineLayouts.postgresql;

/** A scratch SQLite database with every committed migration applied, as the runner applies them. */
function migratedSqlite(): Database.Database {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  for (const folder of fs.readdirSync(sqliteMigrations, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    db.exec(fs.readFileSync(path.join(sqliteMigrations, folder, 'migration.sql'), 'utf8'));
  }
  db.prepare(`INSERT INTO "User" ("name", "role") VALUES ('owner', 'member')`).run();
  db.prepare(`INSERT INTO "WebhookEndpoint" ("url", "events", "secret", "createdAtMs") VALUES ('https://receiver.example/', ',plant.created,plant.deleted,', 'x', 0)`).run();
  return db;
}

const PLANTS: Plant[] = [
  { id: INT64_MAX, name: 'Monstera "deliciosa"', tag: 'tropical\\n' },
  { id: INT64_MIN, name: 'Fern 🌿' },
  { id: 7n, name: 'é\u0301', tag: '\u200btag' },
];

/** The payloads the triggers of `db` write for PLANTS, created then deleted. */
function payloads(db: Database.Database): { type: string; payload: string }[] {
  db.prepare('DELETE FROM "WebhookDelivery"').run();
  const insert = db.prepare(`INSERT INTO "Plant" ("id", "name", "tag", "ownerId") VALUES (?, ?, ?, (SELECT id FROM "User"))`);
  for (const plant of PLANTS) insert.run(plant.id, plant.name, plant.tag ?? null);
  db.prepare('DELETE FROM "Plant"').run();
  return db.prepare<[], { type: string; payload: string }>('SELECT "type", "payload" FROM "WebhookDelivery" ORDER BY "id"').all();
}

describe('the webhook trigger SQL the migration helper writes', () => {
  it('writes the declared fields on both engines, as the latest migrations do', () => {
    for (const engine of ['sqlite', 'postgresql'] as const) {
      expect(writesDeclaredFields(webhookPayloadMembers(engine, webhookOutboxSql(engine)))).toBe(true);
      expect(writesDeclaredFields(webhookPayloadMembers(engine, latestWebhookOutboxMigration(engine, engineLayouts[engine].migrationsDir)))).toBe(true);
    }
    expect(writesDeclaredFields([['id', 'id']])).toBe(false);
  });

  it("on SQLite, makes the same events as the hand-written triggers, byte for byte, and what eventPayload writes", () => {
    const db = migratedSqlite();
    const handWritten = payloads(db);
    db.exec(webhookOutboxSql('sqlite'));
    const generated = payloads(db);
    expect(generated.map(({ type }) => type)).toEqual([...PLANTS.map(() => 'plant.created'), ...PLANTS.map(() => 'plant.deleted')]);
    const data = (payload: string) => payload.slice(payload.indexOf(',"data":'));
    expect(generated.map(({ payload }) => data(payload))).toEqual(handWritten.map(({ payload }) => data(payload)));
    for (const [index, { type, payload }] of generated.entries()) {
      const plant = PLANTS[index % PLANTS.length]!;
      expect(payload).toBe(eventPayload(type, plant, new Date((parse(payload) as { timestamp: string }).timestamp)));
    }
    db.close();
  });

  it('on PostgreSQL, is the function the latest migration defines (as text, white space aside)', () => {
    const squeeze = (sql: string) => sql.replace(/\s+/g, ' ').trim();
    const current = latestWebhookOutboxMigration('postgresql', postgresqlMigrations);
    const defined = current.slice(current.search(/CREATE (OR REPLACE )?FUNCTION "webhook_outbox"/), current.indexOf('$$;') + 3).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');
    const generated = webhookOutboxSql('postgresql');
    expect(squeeze(generated.slice(generated.indexOf('CREATE OR REPLACE')))).toBe(squeeze(defined));
  });
});
