-- CreateTable
CREATE TABLE "AccessVersion" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "version" BIGINT NOT NULL
);

-- CreateTable
CREATE TABLE "SharedKey" (
    "name" TEXT NOT NULL PRIMARY KEY,
    "key" BLOB NOT NULL
);

-- What decides access, versioned (written by hand: Prisma's schema language has no triggers). Every committed
-- change that could make a token accepted a moment ago refused, or change who it speaks for, bumps the one row
-- in the statement that makes it, whichever process or tool made it (the server, the token command, a sqlite3
-- shell): the server watches the row (src/server/db/signals.ts) and forgets the tokens it accepted, and ends
-- the streams they hold open. "Last used" is written once a minute per token and decides nothing: it bumps nothing.
INSERT INTO "AccessVersion" ("id", "version") VALUES (1, 0);

CREATE TRIGGER "ApiToken_access_changed" AFTER UPDATE OF "revokedAt", "expiresAt", "userId", "hash", "id" ON "ApiToken"
WHEN OLD."revokedAt" IS NOT NEW."revokedAt" OR OLD."expiresAt" IS NOT NEW."expiresAt" OR OLD."userId" IS NOT NEW."userId"
  OR OLD."hash" IS NOT NEW."hash" OR OLD."id" IS NOT NEW."id"
BEGIN
  UPDATE "AccessVersion" SET "version" = "version" + 1 WHERE "id" = 1;
END;

CREATE TRIGGER "ApiToken_access_deleted" AFTER DELETE ON "ApiToken"
BEGIN
  UPDATE "AccessVersion" SET "version" = "version" + 1 WHERE "id" = 1;
END;

CREATE TRIGGER "User_access_changed" AFTER UPDATE OF "role", "name", "id" ON "User"
WHEN OLD."role" IS NOT NEW."role" OR OLD."name" IS NOT NEW."name" OR OLD."id" IS NOT NEW."id"
BEGIN
  UPDATE "AccessVersion" SET "version" = "version" + 1 WHERE "id" = 1;
END;

CREATE TRIGGER "User_access_deleted" AFTER DELETE ON "User"
BEGIN
  UPDATE "AccessVersion" SET "version" = "version" + 1 WHERE "id" = 1;
END;
