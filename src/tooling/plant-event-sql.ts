// The webhook outbox triggers' SQL, written from the declared plant fields (shared/plants.ts, `plantFields`).
// The triggers of applied migrations are history and never edited: a migration that adds or removes a field
// replaces them, and `npm run db:new-migration` appends this SQL to it when the fields the latest trigger writes
// differ from the declared ones. `data` is the plant as answered: id, then each field in its order, an optional
// one left out when NULL, exactly what eventPayload (webhooks/outbox.ts) writes for `toPlant`'s plant.
import { z } from 'zod';

import type { DatabaseEngine } from '@/server/db/database-url';
import { OPTIONAL_PLANT_FIELDS, PLANT_FIELD_NAMES, plantFields } from '@/shared/plants';

import { migrationsNewestFirst } from './migration-files';

for (const field of PLANT_FIELD_NAMES) {
  const declared: z.ZodType = plantFields[field];
  const inner = declared instanceof z.ZodOptional ? declared.unwrap() : declared;
  // A text column is written with json_object / to_json; another type needs its own rule here.
  if (!(inner instanceof z.ZodString)) throw new Error(`plant-event-sql.ts writes text fields only; ${field} is not one`);
}

const MEMBERS = ['id', ...PLANT_FIELD_NAMES];
const isOptional = (field: string) => (OPTIONAL_PLANT_FIELDS as readonly string[]).includes(field);

/** SQLite: the full object, then json_remove of each optional member that is NULL (a path never present otherwise). */
function sqliteData(row: 'NEW' | 'OLD'): string {
  const object = `json_object(${MEMBERS.map((field) => `'${field}', ${row}."${field}"`).join(', ')})`;
  if (OPTIONAL_PLANT_FIELDS.length === 0) return object;
  const paths = OPTIONAL_PLANT_FIELDS.map((field) => `CASE WHEN ${row}."${field}" IS NULL THEN '$.${field}' ELSE '$."(present)"' END`);
  return `json_remove(${object},\n        ${paths.join(',\n        ')})`;
}

function sqliteTrigger(event: 'created' | 'deleted'): string {
  const [name, when, row] = event === 'created' ? ['Plant_created_webhook_outbox', 'INSERT', 'NEW' as const] : ['Plant_deleted_webhook_outbox', 'DELETE', 'OLD' as const];
  return `DROP TRIGGER IF EXISTS "${name}";
CREATE TRIGGER "${name}" AFTER ${when} ON "Plant" BEGIN
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id",
    (SELECT 'msg_' || lower(hex(randomblob(16)))),
    'plant.${event}',
    json_object('type', 'plant.${event}', 'timestamp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'data',
      ${sqliteData(row)}),
    CAST(unixepoch('subsec') * 1000 AS INTEGER),
    CAST(unixepoch('subsec') * 1000 AS INTEGER)
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,plant.${event},%';
END;`;
}

/** PostgreSQL: the body as text, member by member (ids exact), an optional member only when not NULL. */
function postgresqlMember(field: string): string {
  const value = `to_json(plant."${field}")::text`;
  return isOptional(field) ? `    || CASE WHEN plant."${field}" IS NULL THEN '' ELSE ',"${field}":' || ${value} END` : `    || ',"${field}":' || ${value}`;
}

function postgresqlFunction(): string {
  return `CREATE OR REPLACE FUNCTION "webhook_outbox"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  plant RECORD;
  event_type TEXT;
  now_ms BIGINT;
  body TEXT;
  event_id TEXT := 'msg_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
  IF TG_OP = 'INSERT' THEN
    plant := NEW;
    event_type := 'plant.created';
  ELSE
    plant := OLD;
    event_type := 'plant.deleted';
  END IF;
  now_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
  body := '{"type":' || to_json(event_type)::text
    || ',"timestamp":' || to_json(to_char(to_timestamp(now_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    || ',"data":{"id":' || plant."id"::text
${PLANT_FIELD_NAMES.map(postgresqlMember).join('\n')}
    || '}}';
  INSERT INTO "WebhookDelivery" ("endpointId", "eventId", "type", "payload", "createdAtMs", "nextAttemptAtMs")
  SELECT "id", event_id, event_type, body, now_ms, now_ms
  FROM "WebhookEndpoint" WHERE "enabled" = TRUE AND "events" LIKE '%,' || event_type || ',%';
  RETURN NULL;
END;
$$;`;
}

/** The SQL that makes an engine's webhook triggers write the declared fields (replacing what a migration wrote). */
export function webhookOutboxSql(engine: DatabaseEngine): string {
  const header = '-- The webhook outbox triggers, rewritten for the declared plant fields (src/tooling/plant-event-sql.ts).';
  // PostgreSQL's trigger calls the function by name: replacing the function is enough.
  return engine === 'sqlite' ? `${header}\n${sqliteTrigger('created')}\n\n${sqliteTrigger('deleted')}\n` : `${header}\n${postgresqlFunction()}\n`;
}

/** The SQL of the newest migration in `migrationsDir` that defines the webhook triggers. */
export function latestWebhookOutboxMigration(engine: DatabaseEngine, migrationsDir: string): string {
  const defines = engine === 'sqlite' ? /CREATE TRIGGER "Plant_created_webhook_outbox"/ : /CREATE (OR REPLACE )?FUNCTION "webhook_outbox"/;
  for (const sql of migrationsNewestFirst(migrationsDir)) if (defines.test(sql)) return sql;
  throw new Error(`no migration in ${migrationsDir} defines the webhook triggers`);
}

/**
 * The `data` members a webhook trigger's SQL writes, each with the column it reads, in order: what the test
 * holds to the declaration, and how the migration helper tells that the triggers need rewriting. SQLite: the
 * fullest json_object of NEW (the inserted row) or OLD; PostgreSQL: the body's `"key":' || … plant."column"`.
 */
export function webhookPayloadMembers(engine: DatabaseEngine, sql: string, row: 'NEW' | 'OLD' = 'NEW'): [string, string][] {
  if (engine === 'postgresql') return [...sql.matchAll(/"(\w+)":' \|\| (?:to_json\()?plant\."(\w+)"/g)].map((match) => [match[1]!, match[2]!]);
  const objects = [...sql.matchAll(new RegExp(`json_object\\(('\\w+', ${row}\\."\\w+"(?:, )?)+\\)`, 'g'))].map((match) => match[0]);
  const members = objects.map((object) => [...object.matchAll(new RegExp(`'(\\w+)', ${row}\\."(\\w+)"`, 'g'))].map((match): [string, string] => [match[1]!, match[2]!]));
  return members.reduce((fullest, each) => (each.length > fullest.length ? each : fullest), []);
}

/** Whether a trigger's members are the declared fields, in order, each from its own column. */
export const writesDeclaredFields = (members: [string, string][]): boolean =>
  members.length === MEMBERS.length && members.every(([key, column], index) => key === MEMBERS[index] && column === key);
