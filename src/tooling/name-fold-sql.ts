// The name fold in the database: its table, the SQL that folds a name with it, the triggers that keep every plant's
// `nameFolded` what the app's foldForSearch (shared/name-fold.ts) makes of its `name`, whoever writes the row (the
// app, Prisma Studio, psql, sqlite3), and the statement that folds the names there are. Written from the generated
// table (shared/name-fold-table.ts), so the app and both databases fold alike. A migration that has been applied is
// history: `npm run db:new-migration` appends this SQL to the next migration whenever the latest one that holds it
// holds other text (a new table, or a change here), and name-fold-sql.test.ts fails until one does.
import type { DatabaseEngine } from '@/server/db/database-url';
import { NAME_FOLD_TABLE } from '@/server/db/engines';
import { nameFoldTable } from '@/shared/name-fold';

import { migrationsNewestFirst } from './migration-files';

/**
 * The table as JSON text, `{"code point": "folded", …}`, one that both engines read with their JSON functions.
 * ASCII only (every other character, and `'`, as a `\u` escape), so the migration holds no invisible character
 * and no quote to double; a member per line group, for a readable diff.
 */
function tableJson(): string {
  const escaped = (text: string) => JSON.stringify(text).replace(/[^\x20-\x26\x28-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const members = [...nameFoldTable()].map(([codePoint, folded]) => `"${codePoint}":${escaped(folded)}`);
  const lines: string[] = [];
  for (let at = 0; at < members.length; at += 8) lines.push(members.slice(at, at + 8).join(','));
  return `{\n${lines.join(',\n')}\n}`;
}

/**
 * Runs of spaces as one, none at either end, as foldForSearch leaves them: each space marked, every mark followed
 * by a space dropped with that space, then the marks. `marker` is a character the text cannot hold (the fold
 * leaves out every control); `trim` the engine's name for trimming one character.
 */
const collapsedSpaces = (text: string, marker: string, trim: string) =>
  `${trim}(replace(replace(replace(${text}, ' ', ' ' || ${marker}), ${marker} || ' ', ''), ${marker}, ''), ' ')`;

/**
 * SQLite: `text` folded, as one expression (a trigger may hold no WITH, so no recursion). Printable ASCII is its
 * lower case; other text is split into its characters by a JSON array of as many elements (json_each numbers
 * them in order), each looked up in the table, and joined in that order. Looked up as text: SQLite's unicode()
 * reads U+FFFE and U+FFFF as U+FFFD.
 */
export function sqliteFold(text: string): string {
  const character = `substr(${text}, j.key + 1, 1)`;
  const positions = `json_each('[' || substr(replace(hex(zeroblob(length(${text}))), '00', ',0'), 2) || ']')`;
  const joined = `(SELECT group_concat(coalesce(f."folded", ${character}), '') FROM ${positions} AS j LEFT JOIN "${NAME_FOLD_TABLE}" AS f ON f."character" = ${character})`;
  return `CASE WHEN ${text} NOT GLOB '*[^ -~]*' THEN ${collapsedSpaces(`lower(${text})`, 'char(1)', 'trim')} ELSE ${collapsedSpaces(joined, 'char(1)', 'trim')} END`;
}

const sqliteTriggers = (fold: (text: string) => string) => `-- A row whose folded name is not its name's (written by SQL, by Prisma Studio, or with none) gets the right one in
-- the statement that wrote it, and the trigram index holds only a right one. A create: the row is corrected, whose
-- UPDATE indexes it ("Plant_renamed_name_search"), or else indexed as written (changes() counts the UPDATE's own row
-- only). An UPDATE of the name or of the folded name: corrected, and indexed by that second UPDATE's run of
-- "Plant_renamed_name_search", which indexes a folded name only when it is right: whichever order SQLite runs the
-- triggers in, the index ends with one entry per plant, the right one.
DROP TRIGGER IF EXISTS "Plant_created_name_search";
CREATE TRIGGER "Plant_created_name_search" AFTER INSERT ON "Plant" BEGIN
  UPDATE "Plant" SET "nameFolded" = ${fold('NEW."name"')} WHERE "id" = NEW."id" AND "nameFolded" IS NOT ${fold('NEW."name"')};
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT NEW."id", NEW."nameFolded" || char(1) WHERE changes() = 0;
END;

DROP TRIGGER IF EXISTS "Plant_renamed_name_fold";
CREATE TRIGGER "Plant_renamed_name_fold" AFTER UPDATE OF "name", "nameFolded" ON "Plant"
WHEN NEW."nameFolded" IS NOT ${fold('NEW."name"')} BEGIN
  UPDATE "Plant" SET "nameFolded" = ${fold('NEW."name"')} WHERE "id" = NEW."id";
END;

DROP TRIGGER IF EXISTS "Plant_renamed_name_search";
CREATE TRIGGER "Plant_renamed_name_search" AFTER UPDATE OF "id", "nameFolded" ON "Plant"
WHEN OLD."id" IS NOT NEW."id" OR OLD."nameFolded" IS NOT NEW."nameFolded" BEGIN
  DELETE FROM "PlantNameSearch" WHERE rowid = OLD."id";
  INSERT INTO "PlantNameSearch" (rowid, "nameFolded") SELECT NEW."id", NEW."nameFolded" || char(1) WHERE NEW."nameFolded" IS ${fold('NEW."name"')};
END;`;

/**
 * PostgreSQL: the fold as a function of its argument alone (IMMUTABLE: the table is a jsonb constant of its body,
 * read once per connection, ~10 ms, and looked up in memory after). Printable ASCII is its lower case, A to Z
 * whatever the database's locale; other text is looked up character by character.
 */
const postgresqlFunctions = (table: string) => `-- The fold as a function; a trigger that gives every row written the fold of its name, whatever the statement gave
-- (none, or another): an INSERT, or an UPDATE of the name or of the folded name itself.
CREATE OR REPLACE FUNCTION "plant_name_fold"(name TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fold$
DECLARE
  folded TEXT;
BEGIN
  IF name ~ '^[\\x20-\\x7e]*$' THEN
    folded := translate(name, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
  ELSE
    SELECT string_agg(CASE WHEN ascii(c.ch) BETWEEN 32 AND 126 THEN translate(c.ch, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
      ELSE coalesce('${table}'::jsonb ->> ascii(c.ch)::text, c.ch) END, '' ORDER BY c.at) INTO folded
    FROM unnest(string_to_array(name, NULL)) WITH ORDINALITY AS c(ch, at);
  END IF;
  RETURN ${collapsedSpaces(`coalesce(folded, '')`, 'chr(1)', 'btrim')};
END;
$fold$;

CREATE OR REPLACE FUNCTION "plant_name_folded"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  NEW."nameFolded" := "plant_name_fold"(NEW."name");
  RETURN NEW;
END;
$$;

DROP TRIGGER IF EXISTS "Plant_name_folded" ON "Plant";
CREATE TRIGGER "Plant_name_folded" BEFORE INSERT OR UPDATE OF "name", "nameFolded" ON "Plant" FOR EACH ROW EXECUTE FUNCTION "plant_name_folded"();`;

/** The statement that folds the names there are, by the table just loaded (a row already right is not written). */
function refold(engine: DatabaseEngine): string {
  return engine === 'sqlite'
    ? `UPDATE "Plant" SET "nameFolded" = ${sqliteFold('"Plant"."name"')} WHERE "nameFolded" IS NOT ${sqliteFold('"Plant"."name"')};`
    : `UPDATE "Plant" SET "nameFolded" = "plant_name_fold"("name") WHERE "nameFolded" IS DISTINCT FROM "plant_name_fold"("name");`;
}

const MARKER = '-- The name fold, kept by the database';

/** The SQL that makes an engine fold names by the current table; its first line is how a migration's copy is found. */
export function nameFoldSql(engine: DatabaseEngine): string {
  const what =
    engine === 'sqlite'
      ? `-- (src/tooling/name-fold-sql.ts, from the table src/shared/name-fold-table.ts): what each code point the fold
-- changes becomes, in a table; triggers that keep each plant's "nameFolded" the fold of its "name" by it, whoever
-- writes the row; and every name there is folded again by it.
CREATE TABLE IF NOT EXISTS "${NAME_FOLD_TABLE}" ("character" TEXT NOT NULL PRIMARY KEY, "folded" TEXT NOT NULL) WITHOUT ROWID;
DELETE FROM "${NAME_FOLD_TABLE}";
INSERT INTO "${NAME_FOLD_TABLE}" ("character", "folded") SELECT char(CAST(key AS INTEGER)), value FROM json_each('${tableJson()}');

${sqliteTriggers(sqliteFold)}`
      : `-- (src/tooling/name-fold-sql.ts, from the table src/shared/name-fold-table.ts): the fold of a name by the table;
-- a trigger that keeps each plant's "nameFolded" the fold of its "name", whoever writes the row; and every name
-- there is folded again.
${postgresqlFunctions(tableJson())}`;
  return `${MARKER}
${what}

-- A name already folded so is not written again; one that is, is written while the write lock is held.
${refold(engine)}
`;
}

/** The name fold SQL of the newest migration in `migrationsDir` that holds one, from its first line to the end of the migration, or null. */
export function latestNameFoldSql(migrationsDir: string): string | null {
  for (const sql of migrationsNewestFirst(migrationsDir)) {
    const at = sql.indexOf(MARKER);
    if (at >= 0) return sql.slice(at);
  }
  return null;
}
