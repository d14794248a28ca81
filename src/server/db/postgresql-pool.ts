import { createHash } from 'node:crypto';

import { PrismaPg } from '@prisma/adapter-pg';

import { postgresConnection } from '@/server/db/database-url';
import { type PoolFigures, watchDatabasePool } from '@/server/observability/metrics';

import { type Queryable, timeStatements } from './statement-timing';

/** A request waits this long for a pooled connection before it fails (as a 500) instead of hanging. */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/**
 * Named statements are parsed and planned once per connection instead of on every call. The name is the
 * statement's hash, so the same SQL always finds its prepared copy.
 */
const statementNames = new Map<string, string>();
function statementName({ sql }: { sql: string }): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `ps_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    // Statements come from a handful of query shapes; the bound only guards against a surprise.
    if (statementNames.size > 1_000) statementNames.clear();
    statementNames.set(sql, name);
  }
  return name;
}

/**
 * Each statement of the API reads a few index entries: no parallel workers and no JIT compiling for them. Both
 * start from the planner's cost, which is high when its estimate is (a name search's pair of characters it has
 * no statistics of is 0.5 % of the store): at 10 M plants they added 10–50 ms to a search that reads 0.02 ms
 * (docs/performance.md, "Search at scale"). Set on each new connection before the pool hands
 * it out (pg-pool's `onConnect`, which it awaits), so its first statement waits for the SET instead of being
 * queued behind it on a busy client (pg deprecates that, and pg 9 refuses it). Not as startup `options`: those
 * would replace the operator's PGOPTIONS, and PgBouncer and other poolers refuse startup options they do not
 * know. Should the server refuse the SET, the connection serves as it is: the settings only save time.
 */
async function withoutParallelWorkersOrJit(client: { query: (sql: string) => Promise<unknown> }): Promise<void> {
  await client.query('SET jit = off; SET max_parallel_workers_per_gather = 0').catch(() => {});
}

/**
 * The PostgreSQL adapter: a pg pool of DATABASE_POOL_SIZE connections, each tuned as it opens (above), its
 * statements named (prepared once per connection), and with METRICS=on the pool watched and every statement timed.
 */
export function postgresqlAdapter(databaseUrl: string, poolSize: number, metrics: boolean): PrismaPg {
  const { connectionString, schema } = postgresConnection(databaseUrl);
  const adapter = new PrismaPg(
    {
      connectionString,
      max: poolSize,
      connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      application_name: 'plant-store',
      // pg-pool waits for the promise onConnect returns before handing the connection out (its `_promiseTry`);
      // @types/pg types it as returning void.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises
      onConnect: withoutParallelWorkersOrJit,
    },
    { schema, statementNameGenerator: statementName },
  );
  const connect = adapter.connect.bind(adapter);
  adapter.connect = async () => {
    const connection = await connect();
    // The adapter's `client` is its pg.Pool, which opens no connection before its first query.
    if (!metrics) return connection;
    const pool = (connection as unknown as { client: PoolFigures }).client;
    watchDatabasePool(pool, poolSize);
    return timeStatements(connection as unknown as Queryable) as unknown as typeof connection;
  };
  return adapter;
}
