// The triggers on Plant whose SQL the declared plant fields decide (shared/plants.ts, `plantFields`), written from
// the declaration as one section of a migration: the webhook outbox's (plant-event-sql.ts), the live feed's change
// log and the REST list's versions. Prisma's schema language has no triggers, and a migration that has been applied
// is history, never edited: whenever this section is not what the newest migration holding one holds (a field
// added, removed or reordered, or a change of the SQL here), `npm run db:new-migration` appends it to the next
// migration, which replaces those triggers, and plant-field-triggers.test.ts fails until one does.
import type { DatabaseEngine } from '@/server/db/database-url';
import { PLANT_FIELD_NAMES } from '@/shared/plants';

import { migrationsNewestFirst } from './migration-files';
import { webhookOutboxSql } from './plant-event-sql';

const quoted = (column: string) => `"${column}"`;
const FIELD_COLUMNS = PLANT_FIELD_NAMES.map(quoted).join(', ');
const fieldValues = (row: 'NEW' | 'OLD') => PLANT_FIELD_NAMES.map((field) => `${row}."${field}"`).join(', ');
/** A delete's row holds none of the fields: NULL for each, whatever default a column might have. */
const NO_FIELDS = PLANT_FIELD_NAMES.map(() => 'NULL').join(', ');
/** A change of any of `columns` between OLD and NEW, with `differ` the engine's NULL-safe inequality. */
const anyChanged = (columns: readonly string[], differ: string) => columns.map((column) => `OLD."${column}" ${differ} NEW."${column}"`).join(' OR ');

/**
 * What a list shows of a plant and where it is listed: its id, the declared fields, the folded name (the order and
 * the search a list answers by) and the owner whose list holds it. A change of any bumps the owner's list version.
 */
const LISTED_COLUMNS = ['id', ...PLANT_FIELD_NAMES, 'nameFolded', 'ownerId'];

const CHANGE_LOG_WHY = `-- The live feed's log: every committed change of a plant leaves one row in "PlantChange", written by the database in
-- the statement that changes the plant, whichever door or process made it; the admin page's live feed
-- (src/server/plants/live/) reads it on every instance. The row holds the declared fields as the change left them,
-- none for a delete. An update that changes none of them leaves nothing; folding names (nameFolded) is not a change.`;

const LIST_VERSION_WHY = `-- The REST list's versions: every committed change a list could show (a plant created, deleted, moved to another
-- owner, or a change of its id, of a declared field or of its folded name) bumps its owner's row of
-- "PlantListVersion" in the statement that makes it, whichever door, process or instance made it;
-- src/server/plants/versions.ts reads them. A change that changes nothing bumps nothing.`;

const sqliteNowMs = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

/** SQLite: the change log's triggers of a create, an update and a delete. */
function sqliteChangeLog(): string {
  const logged = (kind: string, row: 'NEW' | 'OLD' = 'NEW', values = fieldValues(row)) => `  INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", ${FIELD_COLUMNS}, "atMs")
  VALUES (${row}."id", ${row}."ownerId", '${kind}', ${values}, ${sqliteNowMs});`;
  return `${CHANGE_LOG_WHY}
DROP TRIGGER IF EXISTS "Plant_created_change_log";
CREATE TRIGGER "Plant_created_change_log" AFTER INSERT ON "Plant" BEGIN
${logged('created')}
END;

DROP TRIGGER IF EXISTS "Plant_updated_change_log";
CREATE TRIGGER "Plant_updated_change_log" AFTER UPDATE OF ${FIELD_COLUMNS} ON "Plant"
WHEN ${anyChanged(PLANT_FIELD_NAMES, 'IS NOT')} BEGIN
${logged('updated')}
END;

DROP TRIGGER IF EXISTS "Plant_deleted_change_log";
CREATE TRIGGER "Plant_deleted_change_log" AFTER DELETE ON "Plant" BEGIN
${logged('deleted', 'OLD', NO_FIELDS)}
END;`;
}

/** SQLite: the list version's trigger of an update (a create, a delete and a move name no field and stay as a migration wrote them). */
function sqliteListVersion(): string {
  return `${LIST_VERSION_WHY}
DROP TRIGGER IF EXISTS "Plant_updated_list_version";
CREATE TRIGGER "Plant_updated_list_version" AFTER UPDATE OF ${LISTED_COLUMNS.map(quoted).join(', ')} ON "Plant"
WHEN ${anyChanged(LISTED_COLUMNS, 'IS NOT')} BEGIN
  INSERT INTO "PlantListVersion" ("ownerId", "version") VALUES (NEW."ownerId", 1)
  ON CONFLICT ("ownerId") DO UPDATE SET "version" = "version" + 1;
END;`;
}

const postgresqlNowMs = 'floor(extract(epoch FROM clock_timestamp()) * 1000)';

/** PostgreSQL: the change log's function (one for the three kinds) and its trigger, whose UPDATE OF names the fields. */
function postgresqlChangeLog(): string {
  const logged = (kind: string, row: 'NEW' | 'OLD' = 'NEW', values = fieldValues(row)) => `    INSERT INTO "PlantChange" ("plantId", "ownerId", "kind", ${FIELD_COLUMNS}, "atMs")
    VALUES (${row}."id", ${row}."ownerId", '${kind}', ${values}, ${postgresqlNowMs});`;
  return `${CHANGE_LOG_WHY}
CREATE OR REPLACE FUNCTION "plant_change_log"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
${logged('deleted', 'OLD', NO_FIELDS)}
  ELSIF TG_OP = 'INSERT' THEN
${logged('created')}
  ELSIF ${anyChanged(PLANT_FIELD_NAMES, 'IS DISTINCT FROM')} THEN
${logged('updated')}
  END IF;
  RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS "Plant_change_log" ON "Plant";
CREATE TRIGGER "Plant_change_log" AFTER INSERT OR DELETE OR UPDATE OF ${FIELD_COLUMNS} ON "Plant" FOR EACH ROW EXECUTE FUNCTION "plant_change_log"();`;
}

/**
 * PostgreSQL: the list version's function (its statement-level triggers name no field and stay as a migration wrote
 * them). Once per statement, each owner once, in owner order: writers to one owner's plants queue on that owner's row
 * until they commit (so no bump is lost), and two statements that change several owners' plants (an admin's bulk
 * delete) lock the rows in the same order, so they cannot deadlock on them. An update's old and new rows cannot be
 * paired by id (the id may change), so the changed rows are those of either side the other side lacks (as whole
 * rows, NULLs equal): the old side's owners lost or changed a plant, the new side's gained or changed one.
 */
function postgresqlListVersion(): string {
  const columns = LISTED_COLUMNS.map(quoted);
  const listed = columns.join(', ');
  const withOwner = [...columns.slice(0, -1), `"ownerId" AS owner`].join(', ');
  return `${LIST_VERSION_WHY}
CREATE OR REPLACE FUNCTION "plant_list_version"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT DISTINCT "ownerId", 1 FROM new_rows ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT DISTINCT "ownerId", 1 FROM old_rows ORDER BY "ownerId"
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  ELSE
    INSERT INTO "PlantListVersion" ("ownerId", "version")
    SELECT DISTINCT owner, 1 FROM (
      (SELECT ${withOwner} FROM old_rows
       EXCEPT ALL SELECT ${listed} FROM new_rows)
      UNION ALL
      (SELECT ${listed} FROM new_rows
       EXCEPT ALL SELECT ${listed} FROM old_rows)
    ) AS changed ORDER BY owner
    ON CONFLICT ("ownerId") DO UPDATE SET "version" = "PlantListVersion"."version" + 1;
  END IF;
  RETURN NULL;
END;
$$;`;
}

const FIRST_LINE = '-- The triggers the declared plant fields decide';
const LAST_LINE = '-- End of the triggers the declared plant fields decide.';

/** The section: what makes an engine's triggers follow the declared fields, from its first line to its last. */
export function plantFieldTriggersSql(engine: DatabaseEngine): string {
  const parts = engine === 'sqlite' ? [webhookOutboxSql('sqlite'), sqliteChangeLog(), sqliteListVersion()] : [webhookOutboxSql('postgresql'), postgresqlChangeLog(), postgresqlListVersion()];
  return `${FIRST_LINE}
-- (src/tooling/plant-field-triggers.ts, from plantFields in src/shared/plants.ts): they replace what earlier
-- migrations wrote, so that each writes or compares every declared field.

${parts.map((part) => part.trimEnd()).join('\n\n')}

${LAST_LINE}
`;
}

/** The section as the newest migration in `migrationsDir` that holds one holds it, or null. */
export function latestPlantFieldTriggersSql(migrationsDir: string): string | null {
  for (const sql of migrationsNewestFirst(migrationsDir)) {
    const first = sql.indexOf(FIRST_LINE);
    if (first < 0) continue;
    const last = sql.indexOf(LAST_LINE, first);
    if (last < 0) throw new Error(`a migration in ${migrationsDir} holds the plant field triggers' first line without their last: "${LAST_LINE}"`);
    return `${sql.slice(first, last + LAST_LINE.length)}\n`;
  }
  return null;
}
