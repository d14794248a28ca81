// Module hooks for a Prisma Studio that must not write (registered by src/tooling/studio-access.ts, from
// prisma.config.ts). Studio opens SQLite itself, `new DatabaseSync(file)` from `await import('node:sqlite')`
// (Node 22.5 and later) or else `new Database(file)` from `await import('better-sqlite3')`, and no option of its
// reaches the connection's flags. Both imports get read-only-better-sqlite3.mjs instead: one reader on every
// Node, whose connection SQLite opens read-only, so every write Studio attempts fails in SQLite, whatever its SQL.
const readOnly = new URL('./read-only-better-sqlite3.mjs', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if ((specifier === 'node:sqlite' || specifier === 'better-sqlite3') && context.parentURL !== readOnly) {
    return { url: readOnly, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
