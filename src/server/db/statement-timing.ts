import { databaseStatementDuration } from '@/server/observability/metrics';

/** A connection's or a transaction's statement calls, as the adapters have them. */
export type Queryable = { queryRaw: (query: unknown) => Promise<unknown>; executeRaw: (query: unknown) => Promise<unknown> };

/**
 * Times every statement the client sends, on the connection and in its transactions, for
 * `plantstore_db_statement_duration_seconds` (METRICS=on). On PostgreSQL a statement outside a transaction
 * includes its wait for a pooled connection: what a request waits for, which is what an operator needs.
 */
export function timeStatements<T extends Queryable & { startTransaction?: (isolationLevel?: unknown) => Promise<Queryable> }>(connection: T): T {
  for (const [method, kind] of [['queryRaw', 'query'], ['executeRaw', 'execute']] as const) {
    const run = connection[method].bind(connection);
    const timer = databaseStatementDuration.labels(kind);
    connection[method] = async (query: unknown) => {
      const end = timer.startTimer();
      try {
        return await run(query);
      } finally {
        end();
      }
    };
  }
  const startTransaction = connection.startTransaction?.bind(connection);
  if (startTransaction) connection.startTransaction = async (isolationLevel) => timeStatements(await startTransaction(isolationLevel));
  return connection;
}
