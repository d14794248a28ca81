import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';
import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';

import { engineLayouts } from '@/server/db/engines';
import { eventPayload } from '@/server/webhooks/outbox';
import { INT64_MAX, INT64_MIN, OPTIONAL_PLANT_FIELDS, type Plant, PLANT_FIELD_NAMES } from '@/shared/plants';

import { latestWebhookOutboxMigration, webhookOutboxSql, webhookPayloadMembers, writesDeclaredFields } from './plant-event-sql';

/**
 * The webhook triggers' SQL as the migration helper writes it for the declared plant fields: on SQLite, run, the
 * same events, byte for byte, as the triggers the migrations leave and as eventPayload writes. That the migrations
 * hold this SQL now, on both engines: plant-field-triggers.test.ts.
 */

const { migrationsDir: sqliteMigrations } = engineLayouts.sqlite;

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

/** Every declared field set to `value` and the field's name (texts JSON must escape), or only the required ones. */
const plant = (id: bigint, value: string, optional: boolean): Plant =>
  ({ id, ...Object.fromEntries(PLANT_FIELD_NAMES.filter((field) => optional || !OPTIONAL_PLANT_FIELDS.includes(field)).map((field) => [field, `${value} ${field}`])) }) as Plant;
const PLANTS: Plant[] = [plant(INT64_MAX, 'Monstera "deliciosa"\\n', true), plant(INT64_MIN, 'Fern 🌿', false), plant(7n, '\u200bé\u0301', true)];

/** The payloads the triggers of `db` write for PLANTS, created then deleted. */
function payloads(db: Database.Database): { type: string; payload: string }[] {
  db.prepare('DELETE FROM "WebhookDelivery"').run();
  const columns = PLANT_FIELD_NAMES.map((field) => `"${field}"`).join(', ');
  const insert = db.prepare(`INSERT INTO "Plant" ("id", ${columns}, "ownerId") VALUES (?, ${PLANT_FIELD_NAMES.map(() => '?').join(', ')}, (SELECT id FROM "User"))`);
  for (const each of PLANTS) insert.run(each.id, ...PLANT_FIELD_NAMES.map((field) => each[field] ?? null));
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

  it('on SQLite, makes the same events as the migrated triggers, byte for byte, and what eventPayload writes', () => {
    const db = migratedSqlite();
    const migrated = payloads(db);
    db.exec(webhookOutboxSql('sqlite'));
    const generated = payloads(db);
    expect(generated.map(({ type }) => type)).toEqual([...PLANTS.map(() => 'plant.created'), ...PLANTS.map(() => 'plant.deleted')]);
    const data = (payload: string) => payload.slice(payload.indexOf(',"data":'));
    expect(generated.map(({ payload }) => data(payload))).toEqual(migrated.map(({ payload }) => data(payload)));
    for (const [index, { type, payload }] of generated.entries()) {
      expect(payload).toBe(eventPayload(type, PLANTS[index % PLANTS.length]!, new Date((parse(payload) as { timestamp: string }).timestamp)));
    }
    db.close();
  });
});
