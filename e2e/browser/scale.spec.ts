import { readFileSync } from 'node:fs';

import Database from 'better-sqlite3';

import { foldForSearch } from '@/shared/plants';

import { exportHeader, exportLine } from '@test-support/plant-fields';
import { type RunningServer, startServer } from '@test-support/server-process';
import { expect, test } from '@test-support/browser-fixtures';

/**
 * Sorting at 100,000 plants, on a server of its own (the suite's shared one stays small): the order is
 * right at both ends and across a page turn, in both directions, for every sort key of the table; the tag,
 * created and owner sorts are ties almost throughout here (one tag, one creation time, one owner), so the
 * pages also prove the keyset's id tie-break and the untagged segment after the tagged one at scale. How
 * long each takes is measured by e2e/browser/scale/timings.mjs (docs/admin-page.md, "At scale"), not asserted here.
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
  // The total is the database's kept count, exact at any size (docs/admin-page.md, "At scale"), and so is the place
  // of a page within the count cap of either end.
  const pageNumber = page.getByTestId('plants-page-number');
  await expect(range).toHaveText('1–25 of 100,000');
  await expect(pageNumber).toHaveText('page 1 of 4,000');
  await expect.poll(ids).toEqual(expected.slice(0, 25));
  const pager = page.getByRole('navigation', { name: 'Plant pages' });
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect(range).toHaveText('26–50 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(25, 50));
  await pager.getByRole('button', { name: 'Last page' }).click();
  await expect(range).toHaveText('99,976–100,000 of 100,000');
  await expect(pageNumber).toHaveText('page 4,000 of 4,000');
  await expect.poll(ids).toEqual(expected.slice(-25));
  await expect(pager.getByRole('button', { name: 'Next page' })).toHaveAttribute('aria-disabled', 'true');
  // Descending: the other end first.
  await page.getByRole('columnheader', { name: /^Name/ }).getByRole('button').click();
  await expect(page).toHaveURL(/sort=name&dir=desc/);
  await expect(range).toHaveText('1–25 of 100,000');
  await expect.poll(ids).toEqual(expected.slice(-25).reverse());
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect.poll(ids).toEqual(expected.slice(-50, -25).reverse());
  await context.close();
});

test('sorts 100,000 plants by tag, created and owner both ways: ties by id, untagged after every tag, at both ends', async ({ browser }) => {
  const all = Array.from({ length: COUNT }, (_, index) => String(1_000_001 + index));
  // Plant i is untagged when i % 5 === 0 (its id ends in 0 or 5); equal keys go by id.
  const tagged = all.filter((id) => !/[05]$/.test(id));
  const untagged = all.filter((id) => /[05]$/.test(id));
  const byTag = [...tagged, ...untagged];
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  await page.goto('/plants?sort=tag');
  await page.getByLabel('API token').fill(server.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const range = page.getByTestId('plants-range');
  const ids = () => page.locator('tr[data-plant-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-plant-id')));
  const pager = page.getByRole('navigation', { name: 'Plant pages' });
  /** The view at `path`: its first page, the next one, the last one and the one before it. */
  const walk = async (path: string, order: string[]) => {
    if (!page.url().endsWith(path)) await page.goto(path);
    // Exact totals, and places within the count cap of either end, as in the name sort above.
    await expect(range).toHaveText('1–25 of 100,000');
    await expect.poll(ids, `${path}, first page`).toEqual(order.slice(0, 25));
    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect(range).toHaveText('26–50 of 100,000');
    await expect.poll(ids, `${path}, second page`).toEqual(order.slice(25, 50));
    await pager.getByRole('button', { name: 'Last page' }).click();
    await expect(range).toHaveText('99,976–100,000 of 100,000');
    await expect.poll(ids, `${path}, last page`).toEqual(order.slice(-25));
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await expect(range).toHaveText('99,951–99,975 of 100,000');
    await expect.poll(ids, `${path}, the page before the last`).toEqual(order.slice(-50, -25));
  };
  await walk('/plants?sort=tag', byTag);
  await walk('/plants?sort=tag&dir=desc', [...byTag].reverse());
  await walk('/plants?sort=created&dir=desc', [...all].reverse());
  await walk('/plants?sort=owner', all);
  await context.close();
});

test('exports all 100,000 plants of a sorted view from the page, in its order, exact', async ({ browser }) => {
  const all = Array.from({ length: COUNT }, (_, index) => 1 + index);
  // Tag descending: the untagged (every fifth) first, each part by id descending.
  const order = [...all.filter((i) => i % 5 !== 0), ...all.filter((i) => i % 5 === 0)].reverse();
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  await page.goto('/plants?sort=tag&dir=desc');
  await page.getByLabel('API token').fill(server.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('plants-range')).toHaveText('1–25 of 100,000');
  const download = page.waitForEvent('download', { timeout: 60_000 });
  await page.getByRole('button', { name: /Export CSV/ }).click();
  const file = await download;
  const lines = readFileSync((await file.path())!, 'utf8').split('\r\n');
  expect(lines[0]).toBe(`\uFEFF${exportHeader('owner', 'created')}`);
  expect(lines.at(-1)).toBe('');
  const rows = lines.slice(1, -1);
  expect(rows).toHaveLength(COUNT);
  expect(rows.map((line) => line.slice(0, line.indexOf(',')))).toEqual(order.map((i) => String(1_000_000 + i)));
  // A whole row of each kind, as a spreadsheet will read it.
  expect(rows[0]).toMatch(new RegExp(`^${exportLine('1100000', { name: nameOf(100_000) })},admin,\\d{4}-\\d\\d-\\d\\dT`));
  expect(rows.at(-1)).toMatch(new RegExp(`^${exportLine('1000001', { name: nameOf(1), tag: 'tag' })},admin,\\d{4}-`));
  await expect(page.getByRole('status').filter({ hasText: /Exported (100,000|the) plants to/ })).toBeVisible();
  await context.close();
});
