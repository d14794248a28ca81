// better-sqlite3 as Prisma Studio gets it when it must not write (hooks.mjs): every connection read-only
// (SQLITE_OPEN_READONLY: no statement, PRAGMA or ATTACH can lift it), and none creates a file that is not there.
import Database from 'better-sqlite3';

export default function ReadOnlyDatabase(file, options) {
  return new Database(file, { ...options, readonly: true, fileMustExist: true });
}

// Studio's node:sqlite path takes the same reader: it calls prepare().all() and exec(), which both provide.
export { ReadOnlyDatabase as DatabaseSync };
