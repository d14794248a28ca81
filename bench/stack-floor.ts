/**
 * The benchmark's stack floor: the same three REST operations and the same wire contract as the floor
 * (bench/floor.ts), on the named stack used minimally. Beside the floor it tells what the stack itself costs,
 * and beside the app what the app adds to it. Per request, exactly what the floor does, through the stack:
 *
 * - the bearer token's SHA-256 looked up exactly as the floor does (a better-sqlite3 prepared statement on
 *   every request; "last used" written at most once a minute), so the two floors differ only in how the
 *   operation itself runs (docs/decisions/0012-what-the-stack-floor-runs.md);
 * - one tRPC v11 procedure per operation, with a zod input and output schema, called server-side through a
 *   caller (`createCallerFactory(router)(ctx)`), whose resolver makes one call of Prisma 7's client on the
 *   same better-sqlite3 adapter as the app;
 * - ids as exact int64 JSON both ways, written and read by hand as the floor does; the routes, the body,
 *   the failures, Link and ETag are the floor's too: the wire contract is bench/wire.ts's, written once.
 *
 * Nothing else: no rate limit, no request log, no guard beyond the body limit. Prisma is used as it comes
 * (its adapter prepares each statement anew, its query compiler on V8's default tiers). Each operation sends
 * the bare floor's statements, one for one, each through the cheapest call the client offers for it, measured
 * (docs/decisions/0012-what-the-stack-floor-runs.md): `$queryRaw` for the version and the list (findMany costs
 * more), `$executeRaw` for the create's INSERT (a taken id is the database's unique violation, as on the bare
 * floor; `create`, or the same INSERT with RETURNING through `$queryRaw`, cost more) and for the delete. The app
 * may send fewer or other statements: that is the app's own design, measured against this. Run bundled on plain
 * node (lib/build.ts writes .bench-build/bench/stack-floor.mjs):
 *
 *   DATABASE_URL=file:/tmp/x.db PORT=4000 node .bench-build/bench/stack-floor.mjs
 */
import type { ServerResponse } from 'node:http';

import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3';
import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';

import { Prisma, PrismaClient } from '../src/generated/prisma/client';
import { foldForSearch } from '../src/shared/name-fold';
import type { ErrorKind } from '../src/shared/errors';
import {
  type Actor,
  ALL_LIST_VERSION_SQL,
  CONTROL,
  FIELD_COLUMNS,
  FIELDS,
  floorEnv,
  INT64_MAX,
  INT64_MIN,
  listEtag,
  type ListQuery,
  listVersion,
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
  Refusal,
  say,
  send,
  sendList,
  serveFloor,
} from './wire';

// The app's connection settings: the same adapter, 10 s busy timeout, every commit synced (synchronous=FULL).
const prisma = new PrismaClient({ adapter: new PrismaBetterSqlite3({ url: floorEnv.databaseUrl, timeout: 10_000 }) });

// --- the procedures ------------------------------------------------------------------------------------

/** A zod issue's message as the client's `{error, message}`: the floor's words for the same refusals. */
const int64 = (field: string) => z.bigint({ error: say.notInteger(field) }).min(INT64_MIN, { error: say.notInt64(field) }).max(INT64_MAX, { error: say.notInt64(field) });
const text = (field: string, maxLength: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? say.required(field) : say.notString(field)) })
    .min(1, { error: say.empty(field) })
    .refine((value) => value.length <= maxLength || [...value].length <= maxLength, { error: say.tooLong(field, maxLength) })
    .refine((value) => !CONTROL.test(value), { error: say.control(field) })
    .refine((value) => NOT_SPACE.test(value), { error: say.onlySpace(field) });
/** Query and path values are text; an int64 there is decimal digits. */
const decimal = <T extends z.ZodType>(parse: (digits: string) => unknown, schema: T) =>
  z.preprocess((value) => (typeof value === 'string' && /^-?\d{1,20}$/.test(value) ? parse(value) : value), schema);

/** Each declared field's schema, required or optional as declared. */
const fieldSchemas = (schema: (field: (typeof FIELDS)[number]) => z.ZodType) =>
  Object.fromEntries(FIELDS.map((field) => [field.name, field.optional ? schema(field).optional() : schema(field)]));
const plantOut = z.object({ id: z.bigint(), ...fieldSchemas(() => z.string()) });
const listInput = z.object({
  limit: decimal(Number, z.int({ error: say.limit() }).min(1, { error: say.limit() }).max(PAGE_LIMIT_MAX, { error: say.limit() })).optional(),
  after: decimal(BigInt, int64('after')).optional(),
});
const newPlant = z.strictObject({ id: int64('id'), ...fieldSchemas(({ name, maxLength }) => text(name, maxLength)) });
const idInput = z.object({ id: decimal(BigInt, int64('id')) });

type Context = { actor: Actor; link?: string; etag?: string; query?: ListQuery };
const t = initTRPC.context<Context>().create();

/** The database refusing a second row with the same id: through a raw call, Prisma's P2010 with the adapter's kind. */
const uniqueViolation = (error: unknown) =>
  (error as { meta?: { driverAdapterError?: { cause?: { kind?: string } } } } | undefined)?.meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation';

/** A row as the answer's plant: a field it has none of left out. */
const toPlant = (row: PlantRow) => Object.fromEntries(Object.entries(row).filter(([, value]) => value !== null && value !== undefined)) as PlantRow;
const COLUMNS = Prisma.raw(FIELD_COLUMNS);

const router = t.router({
  list: t.procedure
    .input(listInput)
    .output(z.array(plantOut).max(PAGE_LIMIT_MAX))
    .query(async ({ ctx, input }) => {
      const limit = input.limit ?? PAGE_LIMIT_DEFAULT;
      const { actor } = ctx;
      const after = input.after;
      // The app's ETag, from the caller's version read before the list (no If-None-Match is answered here).
      const [versionRow] = actor.admin
        ? await prisma.$queryRawUnsafe<{ version: string }[]>(ALL_LIST_VERSION_SQL)
        : await prisma.$queryRawUnsafe<{ version: string }[]>(OWN_LIST_VERSION_SQL, actor.userId);
      ctx.etag = listEtag(listVersion(actor, versionRow?.version), ctx.query ?? {});
      const rows = actor.admin
        ? after === undefined
          ? await prisma.$queryRaw<PlantRow[]>`SELECT id, ${COLUMNS} FROM "Plant" ORDER BY id LIMIT ${limit + 1}`
          : await prisma.$queryRaw<PlantRow[]>`SELECT id, ${COLUMNS} FROM "Plant" WHERE id > ${after} ORDER BY id LIMIT ${limit + 1}`
        : after === undefined
          ? await prisma.$queryRaw<PlantRow[]>`SELECT id, ${COLUMNS} FROM "Plant" WHERE "ownerId" = ${actor.userId} ORDER BY id LIMIT ${limit + 1}`
          : await prisma.$queryRaw<PlantRow[]>`SELECT id, ${COLUMNS} FROM "Plant" WHERE "ownerId" = ${actor.userId} AND id > ${after} ORDER BY id LIMIT ${limit + 1}`;
      if (rows.length > limit) ctx.link = nextLink(limit, rows[limit - 1]!.id);
      return rows.slice(0, limit).map(toPlant);
    }),
  create: t.procedure
    .input(newPlant)
    .output(plantOut)
    .mutation(async ({ ctx, input }) => {
      // The bare floor's INSERT (with the folded name the search index is filled from); the answer is what it
      // stored, as the bare floor writes it from the input.
      // The input is the id and the declared fields, as newPlant checked them.
      const plant = input as PlantRow;
      const values = FIELDS.map(({ name }) => plant[name] ?? null);
      try {
        await prisma.$executeRaw`INSERT INTO "Plant" ("id", ${COLUMNS}, "nameFolded", "ownerId", "createdAt") VALUES (${plant.id}, ${Prisma.join(values)}, ${foldForSearch(plant.name as string)}, ${ctx.actor.userId}, ${new Date()})`;
      } catch (error) {
        if (uniqueViolation(error)) throw new Refusal('plantIdTaken', say.taken(plant.id));
        throw error;
      }
      return toPlant(plant);
    }),
  delete: t.procedure
    .input(idInput)
    .output(z.void())
    .mutation(async ({ ctx, input }) => {
      const { actor } = ctx;
      const changes = actor.admin
        ? await prisma.$executeRaw`DELETE FROM "Plant" WHERE id = ${input.id}`
        : await prisma.$executeRaw`DELETE FROM "Plant" WHERE id = ${input.id} AND "ownerId" = ${actor.userId}`;
      if (changes === 0) throw new Refusal('plantNotFound', say.noPlant(input.id));
    }),
});
const createCaller = t.createCallerFactory(router);

type Issue = { code: string; path: PropertyKey[]; message: string };

/**
 * A procedure's failure as the floor answers it: a refusal as is, a failed input check with its first issue,
 * as `invalid`; in a body (`body` given), sorted as the app sorts it: a field missing, of the wrong type, or
 * unknown.
 */
function refusalOf(error: unknown, invalid: ErrorKind, body?: Record<string, unknown>): unknown {
  if (!(error instanceof TRPCError)) return error;
  if (error.cause instanceof Refusal) return error.cause;
  const issue = (error.cause as { issues?: Issue[] } | undefined)?.issues?.[0];
  if (error.code !== 'BAD_REQUEST' || !issue) return error;
  if (!body) return new Refusal(invalid, issue.message);
  const kind: ErrorKind =
    issue.code === 'unrecognized_keys' ? 'unknownField' : issue.code === 'invalid_type' ? (body[issue.path[0] as string] === undefined ? 'missingField' : 'wrongType') : invalid;
  return new Refusal(kind, issue.message);
}

// --- the operations, through a caller ------------------------------------------------------------------

async function list(response: ServerResponse, actor: Actor, query: ListQuery): Promise<void> {
  const context: Context = { actor, query };
  const plants = await createCaller(context)
    .list(query)
    .catch((error: unknown) => {
      throw refusalOf(error, 'invalidQueryParameter');
    });
  sendList(response, plantsJson(plants), context.link ?? null, context.etag!);
}

async function create(response: ServerResponse, actor: Actor, body: string): Promise<void> {
  const fields = parseJsonObject(body, true);
  const plant = await createCaller({ actor })
    .create(fields as z.input<typeof newPlant>)
    .catch((error: unknown) => {
      throw refusalOf(error, 'invalidValue', fields);
    });
  send(response, 200, plantJson(plant));
}

async function remove(response: ServerResponse, actor: Actor, id: string): Promise<void> {
  await createCaller({ actor })
    .delete({ id })
    .catch((error: unknown) => {
      throw refusalOf(error, 'invalidPathParameter');
    });
  send(response, 204, null);
}

// The app's durability: every commit synced. The setting is per connection, so it is the first statement.
await prisma.$executeRawUnsafe(`PRAGMA synchronous = ${floorEnv.synchronous}`);
// The token check, as the floor makes it, on a better-sqlite3 connection of its own.
const tokens = openDatabase();
serveFloor(
  'stack floor',
  {
    list,
    create,
    remove,
    health: () => prisma.$queryRaw`SELECT 1`,
    close: () => {
      tokens.close();
      return prisma.$disconnect();
    },
  },
  tokens,
);
