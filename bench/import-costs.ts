/**
 * What a CSV import costs the server (`npx tsx bench/import-costs.ts`, about a minute), on the production build
 * and its own SQLite file: the main thread's CPU time (/proc/PID/schedstat, test-support/server-cpu.ts) of a
 * part of 1,000 rows as the export writes them, of a part of 2,000 of the shortest rows (the most a part may
 * hold), and beside them a bulk delete of 100 plants, the least of 5 each; then of applying 2,000 new plants,
 * per row. These are the figures the import's charges (IMPORT_PART_ROWS_PER_UNIT, IMPORT_APPLY_ROWS_PER_UNIT in
 * src/shared/limits.ts) stand on: a unit is about a millisecond of the server's work. Not part of the test suite.
 */
import { IMPORT_APPLY_ROWS_PER_UNIT, IMPORT_PART_ROWS_PER_UNIT } from '@/shared/limits';

import { ensureTestBuild } from '@test-support/build';
import { api } from '@test-support/http-client';
import { leastServerTime, mainThreadCpuMs, serverTime } from '@test-support/server-cpu';
import { startServer } from '@test-support/server-process';
import { trpcBatch } from '@test-support/trpc-client';

const ROUNDS = 5;

ensureTestBuild();
const server = await startServer({ env: { RATE_LIMIT_PER_TOKEN: '1000000/1000000' } });
try {
  const { token } = await server.createToken('import-costs');
  const client = api(server.baseUrl, token);
  let next = 1_000_000_000n;
  const start = async () => Number((await client.post('/api/plants/imports', '', { contentType: null })).json.id);
  const firstPart = async (text: string) => {
    const id = await start();
    const answer = await client.request('PUT', `/api/plants/imports/${id}/parts/1`, { body: text, contentType: 'text/csv' });
    if (answer.status !== 200) throw new Error(`part refused: ${answer.text}`);
  };
  const exportRows = (rows: number) => `id,name,tag\r\n${Array.from({ length: rows }, () => `${next++},Monstera deliciosa no. ${next},tropical\r\n`).join('')}`;
  const shortestRows = (rows: number) => `id,name\n${Array.from({ length: rows }, () => `${next++},a\n`).join('')}`;

  const started = await leastServerTime(server.pid, start, ROUNDS);
  const exported = (await leastServerTime(server.pid, () => firstPart(exportRows(1_000)), ROUNDS)) - started;
  const shortest = (await leastServerTime(server.pid, () => firstPart(shortestRows(2_000)), ROUNDS)) - started;
  let deleted = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const ids = Array.from({ length: 100 }, () => String(next++));
    await Promise.all(ids.map((plantId) => client.post('/api/plants', `{"id": ${plantId}, "name": "Deleted"}`)));
    const meta = { values: Object.fromEntries(ids.map((_, index) => [`selection.ids.${index}`, ['bigint']])) };
    const { ms } = await serverTime(server.pid, () => trpcBatch(server.baseUrl, token, ['plants.deleteMany'], [{ json: { selection: { kind: 'ids', ids } }, meta }]));
    deleted = Math.min(deleted, ms);
  }

  const rows = 2_000;
  const id = await start();
  for (const [index, part] of [exportRows(rows / 2), exportRows(rows / 2).slice('id,name,tag\r\n'.length)].entries()) {
    await client.request('PUT', `/api/plants/imports/${id}/parts/${index + 1}`, { body: part, contentType: 'text/csv' });
  }
  await client.post(`/api/plants/imports/${id}/preview`, '', { contentType: null });
  const before = mainThreadCpuMs(server.pid);
  const since = Date.now();
  await client.post(`/api/plants/imports/${id}/apply`, '', { contentType: null });
  while ((await client.get(`/api/plants/imports/${id}`)).json.state !== 'done') await new Promise((resolve) => setTimeout(resolve, 200));
  const applied = mainThreadCpuMs(server.pid) - before;

  console.log(`a part of 1,000 rows of an export: ${exported.toFixed(1)} ms (${((exported * 1000) / 1_000).toFixed(0)} µs a row; charged ${1_000 / IMPORT_PART_ROWS_PER_UNIT} units beyond its body)`);
  console.log(`a part of 2,000 rows "id,a": ${shortest.toFixed(1)} ms (${((shortest * 1000) / 2_000).toFixed(0)} µs a row; charged ${2_000 / IMPORT_PART_ROWS_PER_UNIT} units beyond its body)`);
  console.log(`beside them, a bulk delete of 100 plants: ${deleted.toFixed(1)} ms`);
  console.log(`applying ${rows.toLocaleString('en-US')} new plants: ${applied.toFixed(0)} ms of the main thread (${(applied / rows).toFixed(2)} ms a row; charged one unit per ${IMPORT_APPLY_ROWS_PER_UNIT} rows), ${((Date.now() - since) / 1000).toFixed(1)} s`);
} finally {
  await server.stop();
}
