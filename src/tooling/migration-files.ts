// The committed migrations' SQL, for the tooling that writes SQL from the code (plant-event-sql.ts, name-fold-sql.ts)
// and must find what the latest migration holding it wrote.
import fs from 'node:fs';
import path from 'node:path';

/** The SQL of each migration in `migrationsDir`, the newest first. */
export function* migrationsNewestFirst(migrationsDir: string): Generator<string> {
  const folders = fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .reverse();
  for (const folder of folders) yield fs.readFileSync(path.join(migrationsDir, folder, 'migration.sql'), 'utf8');
}
