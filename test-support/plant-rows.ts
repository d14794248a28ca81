import { db } from '@/server/db/client';
import { foldForSearch } from '@/shared/plants';

/**
 * Plants written straight into the table, as another process or an old version would write them (the
 * triggers keep the search index and the events), and many at a time: the unit tests that need a store
 * past a cap or a walk budget fill it in seconds.
 */
export async function insertPlantRows(ownerId: number, rows: { id: bigint; name: string; tag?: string }[]): Promise<void> {
  for (let start = 0; start < rows.length; start += 500) {
    const batch = rows.slice(start, start + 500);
    const values = batch.map(() => '(?, ?, ?, ?, ?, CURRENT_TIMESTAMP)').join(', ');
    await db.$executeRawUnsafe(
      `INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES ${values}`,
      ...batch.flatMap((row) => [row.id, row.name, foldForSearch(row.name), row.tag ?? null, ownerId]),
    );
  }
}
