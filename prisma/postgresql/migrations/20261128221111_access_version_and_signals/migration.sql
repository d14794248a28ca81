-- CreateTable
CREATE TABLE "AccessVersion" (
    "id" INTEGER NOT NULL,
    "version" BIGINT NOT NULL,

    CONSTRAINT "AccessVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SharedKey" (
    "name" TEXT NOT NULL,
    "key" BYTEA NOT NULL,

    CONSTRAINT "SharedKey_pkey" PRIMARY KEY ("name")
);

-- What decides access, versioned and announced (written by hand: Prisma's schema language has no triggers).
-- Every committed change that could make a token accepted a moment ago refused, or change who it speaks for,
-- bumps the one row and NOTIFYs `plant_store_access` in the statement that makes it, whichever process, instance
-- or tool made it (the server, the token command, psql): every instance listens (src/server/db/signals.ts),
-- forgets the tokens it accepted and ends the streams they hold open. A notification is delivered only when
-- its transaction commits, and one channel and payload is delivered once per transaction. The payload is the
-- schema, so instances of another schema in the same database ignore it. "Last used" is written once a minute
-- per token and decides nothing: it bumps nothing.
INSERT INTO "AccessVersion" ("id", "version") VALUES (1, 0);

CREATE FUNCTION "access_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  UPDATE "AccessVersion" SET "version" = "version" + 1 WHERE "id" = 1;
  PERFORM pg_notify('plant_store_access', current_schema());
  RETURN NULL;
END;
$$;

CREATE TRIGGER "ApiToken_access_changed" AFTER UPDATE OF "revokedAt", "expiresAt", "userId", "hash", "id" ON "ApiToken"
FOR EACH ROW WHEN (OLD."revokedAt" IS DISTINCT FROM NEW."revokedAt" OR OLD."expiresAt" IS DISTINCT FROM NEW."expiresAt"
  OR OLD."userId" IS DISTINCT FROM NEW."userId" OR OLD."hash" IS DISTINCT FROM NEW."hash" OR OLD."id" IS DISTINCT FROM NEW."id")
EXECUTE FUNCTION "access_changed"();

CREATE TRIGGER "ApiToken_access_deleted" AFTER DELETE ON "ApiToken" FOR EACH STATEMENT EXECUTE FUNCTION "access_changed"();

CREATE TRIGGER "User_access_changed" AFTER UPDATE OF "role", "name", "id" ON "User"
FOR EACH ROW WHEN (OLD."role" IS DISTINCT FROM NEW."role" OR OLD."name" IS DISTINCT FROM NEW."name" OR OLD."id" IS DISTINCT FROM NEW."id")
EXECUTE FUNCTION "access_changed"();

CREATE TRIGGER "User_access_deleted" AFTER DELETE ON "User" FOR EACH STATEMENT EXECUTE FUNCTION "access_changed"();

-- The plants' changes, announced: every committed change a list or the live feed could show bumps its owner's
-- PlantListVersion row (its triggers on Plant, in the same statement as the PlantChange row the feed reads), so a
-- NOTIFY on `plant_store_plants` from that table's statements reaches every instance at the commit: the live
-- feed reads its log and the kept list versions of those owners (and the sum every admin's list names) are
-- dropped, instead of polling and querying. The payload is the schema and the owners whose version moved, comma
-- separated, or `*` past 7,000 characters of them (a NOTIFY payload holds at most 8,000 bytes). Once per
-- statement; PostgreSQL delivers one notification per transaction for the same channel and payload.
CREATE FUNCTION "plant_versions_announced"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  owners text;
BEGIN
  SELECT string_agg(DISTINCT "ownerId"::text, ',') INTO owners FROM changed_rows;
  IF owners IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('plant_store_plants', current_schema() || ' ' || CASE WHEN length(owners) > 7000 THEN '*' ELSE owners END);
  RETURN NULL;
END;
$$;

CREATE TRIGGER "PlantListVersion_inserted_announced" AFTER INSERT ON "PlantListVersion"
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_versions_announced"();

CREATE TRIGGER "PlantListVersion_updated_announced" AFTER UPDATE ON "PlantListVersion"
REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION "plant_versions_announced"();
