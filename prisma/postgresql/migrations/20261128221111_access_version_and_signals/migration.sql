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

-- The plants' changes, announced: every committed change a list or the live feed could show writes a row of
-- PlantChange or bumps PlantListVersion (their own triggers on Plant), so a NOTIFY on `plant_store_plants` from
-- either table's statements reaches every instance at the commit: the live feed reads its log and the kept list
-- versions are dropped then, instead of polling and querying. Once per statement, and PostgreSQL delivers one
-- notification per transaction for the same channel and payload, so a bulk change is one notification.
CREATE FUNCTION "plants_changed"() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM pg_notify('plant_store_plants', current_schema());
  RETURN NULL;
END;
$$;

CREATE TRIGGER "PlantChange_announced" AFTER INSERT ON "PlantChange" FOR EACH STATEMENT EXECUTE FUNCTION "plants_changed"();

CREATE TRIGGER "PlantListVersion_announced" AFTER INSERT OR UPDATE ON "PlantListVersion" FOR EACH STATEMENT EXECUTE FUNCTION "plants_changed"();
