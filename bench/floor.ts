/**
 * The benchmark's floor: the same three REST operations and the same bearer-token lookup as Plant Store,
 * with nothing in between: node:http, better-sqlite3 prepared statements, hand-written JSON. It is not
 * part of the app; it tells the benchmark what this machine, this database file and this wire contract
 * cost at the least, so the app's figures can be read as a ratio. The bench runs it bundled, on plain node
 * (lib/build.ts writes .bench-build/bench/floor.mjs):
 *
 *   DATABASE_URL=file:/tmp/x.db PORT=4000 node .bench-build/bench/floor.mjs
 *
 * The wire contract is the app's for the happy paths: `Authorization: Bearer pst_…` looked up by its
 * SHA-256 in ApiToken joined to User on every request (revoked and expired tokens refused, "last used"
 * written at most once a minute); a member sees their own plants, an admin every plant; `GET
 * /api/plants?limit&after` by id ascending with `Link: </api/plants?…>; rel="next"` (relative, as the app) when more follow; `POST /api/plants`
 * answers 200 with the plant; `DELETE /api/plants/{id}` answers 204, or 404 when there is no such plant the
 * caller has access to. Ids stay exact int64 both ways. Failures answer `{"error", "message"}` with the
 * app's values; the rarer validation corners (duplicate JSON keys, a few messages) are simpler than the
 * app's. Every answer carries the app's headers (its security headers, a request id, Content-Length: the
 * same bytes on the wire; the bench's contract check compares them).
 *
 * The wire contract itself (token check, routes, body, failures, Link and ETag) is bench/wire.ts's, shared
 * with the stack floor; this file is the operations. It is as fast as this stack allows, with nothing the contract does not need: statements prepared once,
 * headers as one flat array per answer, the common queries (`limit=N`, `limit=N&after=ID`) read without
 * URLSearchParams, JSON written by hand, a Content-Length so node:http never chunks.
 */
import type { ServerResponse } from 'node:http';

import type { ErrorKind } from '../src/shared/errors';
import { foldForSearch } from '../src/shared/name-fold';
import {
  type Actor,
  ALL_LIST_VERSION_SQL,
  CONTROL,
  FIELD_COLUMNS,
  FIELDS,
  INT64_MAX,
  INT64_MIN,
  listEtag,
  type ListQuery,
  listVersion,
  MARK,
  nextLink,
  NOT_SPACE,
  openDatabase,
  OWN_LIST_VERSION_SQL,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  parseJsonObject,
  plantJson,
  type PlantRow,
  plantsJson,
  prismaTimestamp,
  Refusal,
  say,
  send,
  sendList,
  serveFloor,
} from './wire';

const DECIMAL_INT64 = /^-?\d{1,20}$/;

// The app's connection: better-sqlite3 on the same file, WAL (set by the migrations), 10 s busy timeout, and
// the app's durability (wire.ts). better-sqlite3's own default under WAL is NORMAL, which would spare the
// floor the fsync the app pays on every create and delete. The token check runs on it too.
const db = openDatabase();

const listOwn = db.prepare<[number, number], PlantRow>(`SELECT id, ${FIELD_COLUMNS} FROM "Plant" WHERE ownerId = ? ORDER BY id LIMIT ?`).safeIntegers(true);
const listOwnAfter = db
  .prepare<[number, bigint, number], PlantRow>(`SELECT id, ${FIELD_COLUMNS} FROM "Plant" WHERE ownerId = ? AND id > ? ORDER BY id LIMIT ?`)
  .safeIntegers(true);
const listAll = db.prepare<[number], PlantRow>(`SELECT id, ${FIELD_COLUMNS} FROM "Plant" ORDER BY id LIMIT ?`).safeIntegers(true);
const listAllAfter = db.prepare<[bigint, number], PlantRow>(`SELECT id, ${FIELD_COLUMNS} FROM "Plant" WHERE id > ? ORDER BY id LIMIT ?`).safeIntegers(true);
// With the folded name, as the app writes it: the name search's index is filled from it (its trigger fires
// on a row that has one), and a plant the contract's `q` cannot find would be less than a create.
const insertPlant = db.prepare<(bigint | string | number | null)[]>(
  `INSERT INTO "Plant" (id, ${FIELD_COLUMNS}, "nameFolded", ownerId, createdAt) VALUES (?, ${FIELDS.map(() => '?').join(', ')}, ?, ?, ?)`,
);
const FIELD_NAMES = new Set<string>(FIELDS.map(({ name }) => name));
const deleteOwn = db.prepare<[bigint, number]>(`DELETE FROM "Plant" WHERE id = ? AND ownerId = ?`);
const deleteAny = db.prepare<[bigint]>(`DELETE FROM "Plant" WHERE id = ?`);
const ping = db.prepare(`SELECT 1`);
const ownListVersion = db.prepare<[number], string>(OWN_LIST_VERSION_SQL).pluck();
const allListVersion = db.prepare<[], string>(ALL_LIST_VERSION_SQL).pluck();

function int64(text: string, field: string, kind: ErrorKind): bigint {
  if (!DECIMAL_INT64.test(text)) throw new Refusal(kind, say.notInteger(field));
  const id = BigInt(text);
  if (id < INT64_MIN || id > INT64_MAX) throw new Refusal(kind, say.notInt64(field));
  return id;
}

function list(response: ServerResponse, actor: Actor, query: ListQuery): void {
  let limit = PAGE_LIMIT_DEFAULT;
  if (query.limit !== undefined) {
    limit = /^\d{1,4}$/.test(query.limit) ? Number(query.limit) : 0;
    if (limit < 1 || limit > PAGE_LIMIT_MAX) throw new Refusal('invalidQueryParameter', say.limit());
  }
  const after = query.after !== undefined ? int64(query.after, 'after', 'invalidQueryParameter') : undefined;
  // The app's ETag, from the caller's version read before the list (the floor answers no If-None-Match).
  const etag = listEtag(listVersion(actor, actor.admin ? allListVersion.get() : ownListVersion.get(actor.userId)), query);
  const rows = actor.admin
    ? after === undefined
      ? listAll.all(limit + 1)
      : listAllAfter.all(after, limit + 1)
    : after === undefined
      ? listOwn.all(actor.userId, limit + 1)
      : listOwnAfter.all(actor.userId, after, limit + 1);
  const more = rows.length > limit;
  sendList(response, plantsJson(rows, more ? limit : rows.length), more ? nextLink(limit, rows[limit - 1]!.id) : null, etag);
}

function textField(value: unknown, field: string, maxLength: number, required: boolean): string | null {
  if (value === undefined) {
    if (required) throw new Refusal('missingField', say.required(field));
    return null;
  }
  if (typeof value !== 'string' || value.startsWith(MARK)) throw new Refusal('wrongType', say.notString(field));
  if (value.length === 0) throw new Refusal('invalidValue', say.empty(field));
  if (value.length > maxLength && [...value].length > maxLength) throw new Refusal('invalidValue', say.tooLong(field, maxLength));
  if (CONTROL.test(value)) throw new Refusal('invalidValue', say.control(field));
  if (!NOT_SPACE.test(value)) throw new Refusal('invalidValue', say.onlySpace(field));
  return value;
}

function create(response: ServerResponse, actor: Actor, text: string): void {
  const fields = parseJsonObject(text);
  for (const key of Object.keys(fields)) {
    if (key !== 'id' && !FIELD_NAMES.has(key)) throw new Refusal('unknownField', say.unknownField(key));
  }
  if (fields.id === undefined) throw new Refusal('missingField', say.required('id'));
  if (typeof fields.id !== 'string' || !fields.id.startsWith(MARK)) throw new Refusal('wrongType', say.notInteger('id'));
  const id = BigInt(fields.id.slice(1));
  if (id < INT64_MIN || id > INT64_MAX) throw new Refusal('invalidValue', say.notInt64('id'));
  const plant: PlantRow = { id };
  for (const { name, optional, maxLength } of FIELDS) plant[name] = textField(fields[name], name, maxLength, !optional);
  const name = plant.name as string;
  try {
    insertPlant.run(id, ...FIELDS.map(({ name: field }) => plant[field] as string | null), foldForSearch(name), actor.userId, prismaTimestamp(new Date()));
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new Refusal('plantIdTaken', say.taken(id));
    throw error;
  }
  send(response, 200, plantJson(plant));
}

function remove(response: ServerResponse, actor: Actor, text: string): void {
  const id = int64(text, 'id', 'invalidPathParameter');
  const { changes } = actor.admin ? deleteAny.run(id) : deleteOwn.run(id, actor.userId);
  if (changes === 0) throw new Refusal('plantNotFound', say.noPlant(id));
  send(response, 204, null);
}

serveFloor('floor', { list, create, remove, health: () => ping.get(), close: () => void db.close() }, db);
