import Database from 'better-sqlite3';

import { foldForSearch } from '@/shared/plants';

import { type RunningServer, startServer } from '@test-support/server-process';
import { expect, test } from '@test-support/browser-fixtures';

/**
 * Sorting at 100,000 plants, on a server of its own (the suite's shared one stays small): the order is
 * right at both ends and across a page turn, in both directions, and every page is a keyset page. How
 * long each takes is measured by e2e/browser/scale/timings.mjs (README, "At scale"), not asserted here.
 */
const COUNT = 100_000;
const WORDS = ['Monstera', 'Ficus', 'Fern', 'Palm', 'Aloe', 'Cactus', 'Orchid', 'Begonia', 'Calathea', 'Pothos', 'Straße', 'Ivy'];
const nameOf = (i: number) => `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]!.toLowerCase()} no. ${i}`;

let server: RunningServer;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startServer();
  const db = new Database(server.databaseUrl.slice('file:'.length));
  const insert = db.prepare('INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES (?, ?, ?, ?, 1, ?)');
  const now = new Date().toISOString().replace('Z', '+00:00');
  db.transaction(() => {
    for (let i = 1; i <= COUNT; i++) insert.run(BigInt(1_000_000 + i), nameOf(i), foldForSearch(nameOf(i)), i % 5 === 0 ? null : 'tag', now);
  })();
  db.close();
});

test.afterAll(async () => {
  await server?.stop();
});

test('sorts 100,000 plants by name both ways, with keyset pages at both ends', async ({ browser }) => {
  const expected = Array.from({ length: COUNT }, (_, index) => index + 1)
    .map((i) => ({ id: String(1_000_000 + i), key: foldForSearch(nameOf(i)) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id.length - b.id.length || (a.id < b.id ? -1 : 1)))
    .map((row) => row.id);
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  await page.goto('/plants?sort=name');
  await page.getByLabel('API token').fill(server.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const range = page.getByTestId('plants-range');
  const ids = () => page.locator('tr[data-plant-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-plant-id')));
  await expect(range).toHaveText('1–25 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(0, 25));
  const pager = page.getByRole('navigation', { name: 'Plant pages' });
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect(range).toHaveText('26–50 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(25, 50));
  await pager.getByRole('button', { name: 'Last page' }).click();
  await expect(range).toHaveText('99,976–100,000 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(-25));
  // Descending: the other end first.
  await page.getByRole('columnheader', { name: /^Name/ }).getByRole('button').click();
  await expect(page).toHaveURL(/sort=name&dir=desc/);
  await expect(range).toHaveText('1–25 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(-25).reverse());
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect.poll(ids).toEqual(expected.slice(-50, -25).reverse());
  await context.close();
});
