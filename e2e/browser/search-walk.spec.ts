import Database from 'better-sqlite3';

import { SEARCH_WALK_BUDGET } from '@/shared/limits';
import { foldForSearch } from '@/shared/plants';

import { type RunningServer, startServer } from '@test-support/server-process';
import type { Page } from '@playwright/test';

import { addPlant, expect, test } from '@test-support/browser-fixtures';

/**
 * A name search of many matches sorted by name, whose matches all come after more names than one request may
 * walk (SEARCH_WALK_BUDGET): the first answer holds no row and says where its walk stopped, and the page asks
 * on by itself until it is full, says so while it searches, and lets the person stop and go on
 * (docs/admin-page.md, "At scale"). On a server of its own: the suite's shared one stays small.
 */
const FILLERS = SEARCH_WALK_BUDGET + 500;
/** More matches than SQLite's trigram index plan takes (2,000), so the search walks. */
const NEEDLES = 2_100;
const NEEDLE_BASE = 1_000_000;
const needleIds = (from: number, count: number) => Array.from({ length: count }, (_, index) => String(NEEDLE_BASE + from + index));

let server: RunningServer;

/** Opens `address` and signs in as the admin. */
async function signIn(page: Page, address: string): Promise<void> {
  await page.goto(address);
  await page.getByLabel('API token').fill(server.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Holds the plants.page requests `hold` picks (its URL, and how many plants.page requests came so far) until
 * `release()`; `held` lists them. The others pass.
 */
async function holdPageRequests(page: Page, hold: (url: URL, seen: number) => boolean): Promise<{ release: () => void; held: string[] }> {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const held: string[] = [];
  let seen = 0;
  await page.route('**/api/trpc/**', async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname.includes('plants.page') && hold(url, ++seen)) {
      held.push(url.href);
      await released;
    }
    await route.continue();
  });
  return { release, held };
}

const idsOf = (page: Page) => () => page.locator('tr[data-plant-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-plant-id')));

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startServer();
  const db = new Database(server.databaseUrl.slice('file:'.length));
  const insert = db.prepare('INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES (?, ?, ?, NULL, 1, ?)');
  const now = new Date().toISOString().replace('Z', '+00:00');
  const add = (id: number, name: string) => insert.run(BigInt(id), name, foldForSearch(name), now);
  db.transaction(() => {
    for (let i = 1; i <= FILLERS; i++) add(i, `Aaa filler ${String(i).padStart(6, '0')}`);
    for (let i = 0; i < NEEDLES; i++) add(NEEDLE_BASE + i, `Zz needle ${String(i).padStart(6, '0')}`);
  })();
  db.close();
});

test.afterAll(async () => {
  await server?.stop();
});

test('a search whose first walk finds nothing asks on by itself until the page is full', async ({ browser }) => {
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  const pageRequests: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.includes('plants.page')) pageRequests.push(request.url());
  });
  await signIn(page, '/plants?q=needle&sort=name');
  const ids = idsOf(page);
  await expect.poll(ids).toEqual(needleIds(0, 25));
  await expect(page.getByTestId('plants-range')).toHaveText(/^1–25 of /);
  // Two requests at least: the one the address names, which stopped after SEARCH_WALK_BUDGET names, and the one that went on.
  expect(pageRequests.length).toBeGreaterThanOrEqual(2);
  await expect(page.getByTestId('walk-status')).toHaveCount(0);
  await expect(page.getByText('No plants match these filters.')).toHaveCount(0);
  // The address still names the page the person asked for; the next page follows its last row.
  expect(new URL(page.url()).search).toBe('?q=needle&sort=name');
  await page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button', { name: 'Next page' }).click();
  await expect.poll(ids).toEqual(needleIds(25, 25));
  await context.close();
});

test('in id order, the default, a search whose first walk finds nothing asks on by itself the same way', async ({ browser }) => {
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  // "zz": two characters in more names than SQLite's index plan takes, so it walks by id (the fillers' ids come first).
  const { release, held } = await holdPageRequests(page, (_, seen) => seen === 2);
  await signIn(page, '/plants?q=zz');
  const status = page.getByTestId('walk-status');
  await expect(status).toHaveAttribute('data-state', 'searching');
  await expect(status).toContainText(`ids up to ${SEARCH_WALK_BUDGET}`);
  // The request that goes on starts after the id where the first walk stopped, and carries no key (id order has none).
  // The page sends it once the status shows: waited for, not assumed to have reached the route already.
  await expect.poll(() => held.length).toBe(1);
  expect(new URL(held[0]!).searchParams.get('input')).toContain(`"cursor":{"kind":"after","id":"${SEARCH_WALK_BUDGET}"}`);
  release();
  await expect.poll(idsOf(page)).toEqual(needleIds(0, 25));
  await expect(status).toHaveCount(0);
  await expect(page.getByTestId('plants-range')).toHaveText(/^1–25 of /);
  expect(new URL(page.url()).search).toBe('?q=zz');
  await page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button', { name: 'Next page' }).click();
  await expect.poll(idsOf(page)).toEqual(needleIds(25, 25));
  await context.close();
});

test('the person sees the search going on, can stop it, and search further, at 320 px and by keyboard', async ({ browser, shot }) => {
  const context = await browser.newContext({ baseURL: server.baseUrl, viewport: { width: 320, height: 700 } });
  const page = await context.newPage();
  // Hold the request that goes on (the second plants.page request) until the test lets it through.
  const { release } = await holdPageRequests(page, (_, seen) => seen === 2);
  await signIn(page, '/plants?q=needle&sort=name');
  const status = page.getByTestId('walk-status');
  await expect(status).toHaveAttribute('data-state', 'searching');
  await expect(status.getByRole('status')).toHaveText('Searching further…');
  await expect(status).toContainText(`names up to “${foldForSearch(`Aaa filler ${String(SEARCH_WALK_BUDGET).padStart(6, '0')}`)}”`);
  await shot(page, 'search-walk-searching-320');
  // By keyboard: the button that had focus goes (Stop becomes Search further), and focus goes with it, not to the body.
  await status.getByRole('button', { name: 'Stop' }).focus();
  await page.keyboard.press('Enter');
  await expect(status).toHaveAttribute('data-state', 'stopped');
  await expect(status.getByRole('button', { name: 'Search further' })).toBeFocused();
  await expect(status.getByRole('status')).toHaveText('Search stopped: 0 plants found so far, more may match.');
  release();
  // Nothing fits only sideways at 320 px.
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  await shot(page, 'search-walk-stopped-320');
  // The held answer was cancelled by the stop: it is not shown. Search further, by keyboard (focus is on it).
  await page.keyboard.press('Enter');
  await expect.poll(idsOf(page)).toEqual(needleIds(0, 25));
  await expect(status).toHaveCount(0);
  // The line went with focus in it: focus is on the pager after it, and the live region, still there, says the search ended.
  await expect(page.getByRole('navigation', { name: 'Plant pages' }).locator(':focus')).toHaveCount(1);
  await expect(page.getByTestId('walk-status-idle').getByRole('status')).toHaveText('Search done: 25 plants found.');
  await context.close();
});

test('a page past the last match, whose walk goes on to the end of the order, shows the last page instead', async ({ browser }) => {
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  // By name descending the matches come first; after the last of them only fillers follow, more than one walk reads.
  await signIn(page, `/plants?q=needle&sort=name&dir=desc&after=${NEEDLE_BASE}`);
  await expect(page).toHaveURL(/[?&]page=last/);
  await expect.poll(idsOf(page)).toEqual(needleIds(0, 25).reverse());
  await expect(page.getByTestId('walk-status')).toHaveCount(0);
  await expect(page.getByText('No plants match these filters.')).toHaveCount(0);
  await context.close();
});

test('a Stop sticks when the page is read again (an add refetches it), and nothing more is asked', async ({ browser }) => {
  const context = await browser.newContext({ baseURL: server.baseUrl });
  const page = await context.newPage();
  // Hold every request that goes on; the one the address names (and its refetches) pass.
  const { release, held: onward } = await holdPageRequests(page, (url) => url.searchParams.get('input')?.includes('"cursor"') === true);
  await signIn(page, '/plants?q=needle&sort=name');
  const status = page.getByTestId('walk-status');
  await expect(status).toHaveAttribute('data-state', 'searching');
  const cancelled = page.waitForEvent('requestfailed', (request) => request.url().includes('plants.page'));
  await status.getByRole('button', { name: 'Stop' }).click();
  await expect(status).toHaveAttribute('data-state', 'stopped');
  // The request that was going on is cancelled by the Stop, not left to run on the server.
  expect((await cancelled).failure()?.errorText).toMatch(/ABORTED/);
  release();
  const asked = onward.length;
  // An add invalidates the page, which is read again (and awaited) before the dialog's notice shows; the plant
  // sorts after every match, so the walk stops where it did.
  await addPlant(page, { id: '3000000', name: 'Zzzz added later' });
  await expect(page.getByRole('status').filter({ hasText: 'Added plant' })).toBeAttached();
  // Two frames: the refetched answer is rendered by then.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await expect(status).toHaveAttribute('data-state', 'stopped');
  await expect(status.getByRole('status')).toHaveText('Search stopped: 0 plants found so far, more may match.');
  expect(onward.length).toBe(asked);
  await context.close();
});
