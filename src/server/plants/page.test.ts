import { describe, expect, it } from 'vitest';

import { databaseStatementDuration } from '@/server/observability/metrics';
import { actorOf, signIn } from '@test-support/actors';
import { insertPlantRows } from '@test-support/plant-rows';

import { COUNT_WALK_BUDGET } from './counts';
import { indexedMatchesMax } from './search';

/** The unit tests' engine is SQLite: its cap. */
const INDEXED_MATCHES_MAX = indexedMatchesMax();

/**
 * The admin table's counts where they are not exact. A search of many matches is counted by a capped walk
 * of the member's rows in whatever order the database reads them (on SQLite the covering name index), while
 * the page walks by id: the walk's count can miss the very rows the page shows.
 */
describe("the admin table's inexact total", () => {
  it('is never below the rows the page shows, and one more when another page follows', async () => {
    const member = await signIn('page-inexact-total');
    const { userId } = actorOf(member);
    const matches = INDEXED_MATCHES_MAX + 1;
    // The matches come first by id and last by name; the walk's budget of rows that sort before them by
    // name holds none.
    await insertPlantRows(userId, Array.from({ length: matches }, (_, i) => ({ id: BigInt(1 + i), name: `zvy ${i}` })));
    await insertPlantRows(userId, Array.from({ length: COUNT_WALK_BUDGET }, (_, i) => ({ id: BigInt(1_000_000 + i), name: `aloe ${i}` })));

    const page = await member.caller.plants.page({ size: 25, q: 'vy' });
    expect(page.rows.map((row) => row.name)).toEqual(Array.from({ length: 25 }, (_, i) => `zvy ${i}`));
    expect(page.hasNext).toBe(true);
    expect(page.totalExact).toBe(false);
    expect(page.total).toBeGreaterThanOrEqual(26);

    const next = await member.caller.plants.page({ size: 25, q: 'vy', cursor: { kind: 'after', id: page.rows.at(-1)!.id } });
    expect(next.rows).toHaveLength(25);
    expect(next.total).toBeGreaterThanOrEqual(next.offset + 25 + 1);
  }, 60_000);
});

/** The database statements the server has run (each kind), from its own metric. */
async function statementsRun(): Promise<number> {
  const { values } = await databaseStatementDuration.get();
  return values.filter((value) => value.metricName === 'plantstore_db_statement_duration_seconds_count').reduce((sum, value) => sum + value.value, 0);
}

describe("the admin table's first page", () => {
  it('with room to spare is its own count: it does not count its matches again', async () => {
    const member = await signIn('page-short-first');
    const { userId } = actorOf(member);
    const quinces = Array.from({ length: 12 }, (_, i) => `quince ${String(i).padStart(2, '0')}`);
    await insertPlantRows(userId, quinces.map((name, i) => ({ id: BigInt(2_000_000 + i), name })));
    await insertPlantRows(userId, [{ id: 2_000_100n, name: 'rose' }]);

    const before = await statementsRun();
    const short = await member.caller.plants.page({ size: 25, q: 'quince' });
    const shortStatements = (await statementsRun()) - before;
    expect(short.rows.map((row) => row.name)).toEqual(quinces);
    expect({ total: short.total, exact: short.totalExact, hasNext: short.hasNext }).toEqual({ total: 12, exact: true, hasNext: false });

    // The same search in pages of ten: another page follows, so the total is counted.
    const between = await statementsRun();
    const full = await member.caller.plants.page({ size: 10, q: 'quince' });
    const fullStatements = (await statementsRun()) - between;
    expect({ total: full.total, exact: full.totalExact, hasNext: full.hasNext }).toEqual({ total: 12, exact: true, hasNext: true });
    expect(shortStatements).toBe(fullStatements - 1);
  });
});
