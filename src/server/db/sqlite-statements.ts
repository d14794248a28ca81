import type { Database, Statement } from 'better-sqlite3';

/**
 * Prisma's SQLite adapter prepares every statement anew on each call (7–8 % of a request's CPU in
 * `npm run bench -- --profile`), though Prisma sends the same few statement texts over and over. Here
 * each text is prepared once per connection, and its result columns read once (better-sqlite3 builds them
 * anew on every `columns()`; a text's columns are fixed by the schema, which migrations set before the
 * server starts). The adapter calls `bind(args)` on what `prepare` returns, which would fix a cached
 * statement's parameters for good, so the wrapper hands the arguments to each call instead. better-sqlite3
 * runs a statement to completion synchronously, so one is never in use twice.
 */
export function prepareEachStatementOnce(database: Database): void {
  const prepare = database.prepare.bind(database) as (sql: string) => Statement<unknown[]>;
  type Prepared = ReturnType<typeof preparedOnce>;
  const prepared = new Map<string, Prepared>();
  function preparedOnce(statement: Statement<unknown[]>) {
    let columns: ReturnType<Statement<unknown[]>['columns']> | undefined;
    const readColumns = () => (columns ??= statement.columns());
    const withArguments = (args: unknown[]) => ({
      reader: statement.reader,
      columns: readColumns,
      run: () => statement.run(args),
      raw: () => ({ all: () => statement.raw(true).all(args) }),
    });
    return { ...withArguments([]), bind: withArguments };
  }
  database.prepare = ((sql: string) => {
    let statement = prepared.get(sql);
    if (statement === undefined) {
      statement = preparedOnce(prepare(sql));
      // Statement texts come from a handful of query shapes; the bound only guards against a surprise.
      if (prepared.size >= 1_000) prepared.clear();
      prepared.set(sql, statement);
    }
    return statement;
  }) as unknown as Database['prepare'];
}
