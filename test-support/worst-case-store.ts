/**
 * A store built for the costliest calls a token can make (e2e/api/router-costs.test.ts): a member who owns
 * 40,000 plants, each with a tag of its own; a long live-feed log; many users and tokens; a webhook endpoint
 * with a long delivery log. Written in SQL, in the database itself (a series of rows, on SQLite a recursive
 * common table expression, on PostgreSQL generate_series), so it takes seconds on either engine, with the
 * database's own triggers keeping what they keep (search index, versions, events). Rows a call uses up (plants
 * to delete, tombstones to restore) are made per call with `plantsFor` and `tombstonesFor`.
 */
import { createCipheriv, randomBytes } from 'node:crypto';

import type { TestDatabase } from './database';

/** The member's plants, and so their distinct tags. */
export const MEMBER_PLANTS = 40_000;
/** Ids of the member's plants: MEMBER_FIRST_ID onwards. */
export const MEMBER_FIRST_ID = 1_000_000n;
/** Rows of the live feed's log, all the member's. */
export const CHANGE_LOG_ROWS = 300_000;
/** Users beside the member and the admin (the owner filter lists them). */
export const EXTRA_USERS = 1_000;
/** Tokens of those users (the token list shows them all). */
export const EXTRA_TOKENS = 5_000;
/** Deliveries waiting for the long endpoint, and its delivered and failed ones. */
export const PENDING_DELIVERIES = 40_000;
export const DONE_DELIVERIES = 20_000;

/** The member's nth plant's name and tag, as the store holds them. */
export const memberPlantName = (index: number) => `Cost plant ${index}`;
export const memberPlantTag = (index: number) => `zz${String(index).padStart(6, '0')}`;

/** `count` rows numbered 0 … count − 1 as `n`, for an INSERT … SELECT: `${series(…)} INSERT INTO … SELECT … FROM series`. */
function series(database: TestDatabase, count: number): string {
  return database.engine === 'postgresql'
    ? `WITH series AS (SELECT g AS n FROM generate_series(0, ${count - 1}) AS g)`
    : `WITH RECURSIVE series(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM series WHERE n < ${count - 1})`;
}

/** `n` zero-padded to six digits, in this engine's SQL. */
const padded = (database: TestDatabase, column: string) => (database.engine === 'postgresql' ? `lpad(${column}::text, 6, '0')` : `printf('%06d', ${column})`);

export async function userId(database: TestDatabase, name: string): Promise<number> {
  const [user] = await database.query<{ id: bigint }>('SELECT id FROM "User" WHERE name = ?', [name]);
  if (!user) throw new Error(`no user ${name}`);
  return Number(user.id);
}

/** The member's plants, the log, the users and their tokens (the member and the admin exist already). */
export async function buildWorstCaseStore(database: TestDatabase, member: string): Promise<void> {
  const ownerId = await userId(database, member);
  const now = await database.dateTime(new Date());
  // The name folded as the app folds an ASCII name (shared/plants.ts, foldForSearch): in lower case.
  await database.execute(
    `${series(database, MEMBER_PLANTS)}
     INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
     SELECT ${MEMBER_FIRST_ID} + n, 'Cost plant ' || n, 'cost plant ' || n, 'zz' || ${padded(database, 'n')}, ?, ? FROM series`,
    [ownerId, now],
  );
  const atMs = Date.now();
  await database.execute(
    `${series(database, CHANGE_LOG_ROWS)}
     INSERT INTO "PlantChange" ("plantId", "ownerId", kind, name, tag, "atMs")
     SELECT ${MEMBER_FIRST_ID} + (n % ${MEMBER_PLANTS}), ?, 'updated', 'Cost plant ' || n, NULL, ? FROM series`,
    [ownerId, atMs],
  );
  const created = await database.dateTime(new Date());
  await database.execute(
    `${series(database, EXTRA_USERS)}
     INSERT INTO "User" (name, role, "createdAt") SELECT 'cost-user-' || ${padded(database, 'n')}, 'member', ? FROM series`,
    [created],
  );
  // Hashes no token has (the token list reads them, no lookup ever finds them).
  const salt = randomBytes(8).toString('hex');
  await database.execute(
    `${series(database, EXTRA_TOKENS)}
     INSERT INTO "ApiToken" ("userId", hash, prefix, "createdAt")
     SELECT u.id, ? || '-' || n, 'pst_cost', ? FROM series JOIN "User" u ON u.name = 'cost-user-' || ${padded(database, `(n % ${EXTRA_USERS})`)}`,
    [salt, created],
  );
  if (database.engine === 'postgresql') await database.execute('ANALYZE');
}

/** The endpoint's long delivery log: deliveries waiting, delivered and failed, as the outbox writes them. */
export async function fillDeliveryLog(database: TestDatabase, endpointId: number, options: { pending?: number; done?: number } = {}): Promise<void> {
  const { pending = PENDING_DELIVERIES, done = DONE_DELIVERIES } = options;
  const atMs = Date.now();
  const tag = randomBytes(4).toString('hex');
  const insert = (count: number, status: string, offset: number) =>
    database.execute(
      `${series(database, count)}
       INSERT INTO "WebhookDelivery" ("endpointId", "eventId", type, payload, status, attempts, "createdAtMs", "nextAttemptAtMs")
       SELECT ?, 'msg_' || ? || '_' || (n + ${offset}), 'plant.created', '{"type":"plant.created","data":{"id":' || n || ',"name":"Cost plant"}}', ?, 1, ?, ? FROM series`,
      [endpointId, tag, status, atMs, atMs],
    );
  await insert(pending, 'pending', 0);
  await insert(Math.ceil(done / 2), 'delivered', pending);
  await insert(Math.floor(done / 2), 'failed', pending + done);
  if (database.engine === 'postgresql') await database.execute('ANALYZE "WebhookDelivery"');
}

/** `count` fresh plants of the member from `firstId` on (for a call that deletes or re-tags them). */
export async function plantsFor(database: TestDatabase, ownerId: number, firstId: bigint, count: number): Promise<bigint[]> {
  const now = await database.dateTime(new Date());
  await database.execute(
    `${series(database, count)}
     INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt")
     SELECT ${firstId} + n, 'Fresh plant ' || n, 'fresh plant ' || n, 'fresh', ?, ? FROM series`,
    [ownerId, now],
  );
  return Array.from({ length: count }, (_, index) => firstId + BigInt(index));
}

/** `count` plants the member deleted from the page a moment ago, from `firstId` on (for a restore). */
export async function tombstonesFor(database: TestDatabase, ownerId: number, firstId: bigint, count: number): Promise<bigint[]> {
  const created = await database.dateTime(new Date());
  await database.execute(
    `${series(database, count)}
     INSERT INTO "PlantTombstone" (id, name, tag, "ownerId", "createdAt", "deletedById", "deletedAtMs")
     SELECT ${firstId} + n, 'Deleted plant ' || n, 'kept-' || n, ?, ?, ?, ? FROM series`,
    [ownerId, created, ownerId, Date.now()],
  );
  return Array.from({ length: count }, (_, index) => firstId + BigInt(index));
}

/** The live feed's newest position. */
export async function lastChange(database: TestDatabase): Promise<bigint> {
  const [row] = await database.query<{ seq: bigint | null }>('SELECT MAX(seq) AS seq FROM "PlantChange"');
  return BigInt(row?.seq ?? 0);
}

/**
 * The live feed's event id of position `seq` as `userId` is sent it (src/server/plants/live/event-ids.ts: the
 * position and the user in one AES block, under the key every instance shares), so a test can resume a feed
 * from any position. The key is made here if no server has made it yet, as a server would: the first insert wins.
 */
export async function feedEventId(database: TestDatabase, userId: number, seq: bigint): Promise<string> {
  const key = randomBytes(16);
  await database.execute(`INSERT INTO "SharedKey" ("name", "key") VALUES ('liveFeedIds', ?) ON CONFLICT ("name") DO NOTHING`, [key]);
  const [row] = await database.query<{ key: Buffer | Uint8Array }>(`SELECT "key" FROM "SharedKey" WHERE "name" = 'liveFeedIds'`);
  const block = Buffer.alloc(16);
  block.writeBigUInt64BE(seq, 0);
  block.writeUInt32BE(userId, 8);
  block.writeUInt32BE(0x66656564, 12);
  const cipher = createCipheriv('aes-128-ecb', Buffer.from(row!.key), null).setAutoPadding(false);
  return `c${Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url')}`;
}
