import { mkdirSync } from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';
import type { Browser, Page } from '@playwright/test';

import { foldForSearch } from '@/shared/plants';

import { type RunningServer, startServer } from '@test-support/server-process';
import { expect, SCREENS_DIR, test } from '@test-support/browser-fixtures';

/**
 * The admin page at 100,012 plants, on a server of its own: the exact total, the last page and a page in the middle
 * placed from the counts the database keeps; a bulk delete of all of them that says the exact number, shows its progress, is stopped, and is
 * undone; a bulk re-tag undone. Screenshots of these states at 375, 1024 and 1920 px in both themes
 * (test-results/e2e/screens/60-*.png).
 */
const COUNT = 100_012;
const TROPICAL = 12;

let server: RunningServer;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  // The delete of 100,012 runs call after call: the token's rate limit would only make the test wait.
  server = await startServer({ env: { RATE_LIMIT_PER_TOKEN: 'off' } });
  const db = new Database(server.databaseUrl.slice('file:'.length));
  const insert = db.prepare('INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES (?, ?, ?, ?, 1, ?)');
  const now = new Date().toISOString().replace('Z', '+00:00');
  db.transaction(() => {
    for (let i = 1; i <= COUNT; i++) {
      const name = `Plant no. ${i}`;
      insert.run(BigInt(2_000_000 + i), name, foldForSearch(name), i <= TROPICAL ? 'Tropical' : i % 3 === 0 ? 'tropical' : 'fern', now);
    }
  })();
  db.close();
});

test.afterAll(async () => {
  await server?.stop();
});

/** A page of this spec's own server (the fixture's `page` is the suite's shared one). */
async function signedIn(browser: Browser, path: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: server.baseUrl, viewport: { width: 1024, height: 800 } });
  const page = await context.newPage();
  await page.goto(path);
  await page.getByLabel('API token').fill(server.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}

/** The window at 375, 1024 and 1920 px, light and dark, as `60-<state>-<width>-<scheme>.png`. */
async function shots(page: Page, state: string, inView?: ReturnType<Page['locator']>): Promise<void> {
  mkdirSync(SCREENS_DIR, { recursive: true });
  const size = page.viewportSize()!;
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [375, 1024, 1920]) {
      await page.setViewportSize({ width, height: 800 });
      await inView?.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(SCREENS_DIR, `60-${state}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(size);
}

const number = (text: string) => Number(text.replace(/,/g, ''));

test('100,012 plants: the exact total, the last page and the middle; a bulk delete of all of them stopped, then undone', async ({ browser }) => {
  test.setTimeout(240_000);
  const page = await signedIn(browser, '/plants');
  const range = page.getByTestId('plants-range');
  const pageNumber = page.getByTestId('plants-page-number');
  await expect(range).toHaveText('1–25 of 100,012');
  await expect(pageNumber).toHaveText('page 1 of 4,001');
  const pager = page.getByRole('navigation', { name: 'Plant pages' });
  await pager.getByRole('button', { name: 'Last page' }).click();
  await expect(range).toHaveText('100,001–100,012 of 100,012');
  await expect(pageNumber).toHaveText('page 4,001 of 4,001');
  await shots(page, 'last-page', pager);
  await pager.getByRole('button', { name: 'Previous page' }).click();
  await expect(range).toHaveText('99,976–100,000 of 100,012');
  await expect(pageNumber).toHaveText('page 4,000 of 4,001');
  // The middle, 50,000 plants from either end, by its address (the plant before it) and on to the next page.
  await page.goto('/plants?after=2050000');
  await expect(range).toHaveText('50,001–50,025 of 100,012');
  await expect(pageNumber).toHaveText('page 2,001 of 4,001');
  await pager.getByRole('button', { name: 'Next page' }).click();
  await expect(range).toHaveText('50,026–50,050 of 100,012');
  await expect(pageNumber).toHaveText('page 2,002 of 4,001');
  await pager.getByRole('button', { name: 'First page' }).click();
  await expect(range).toHaveText('1–25 of 100,012');

  await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
  const bar = page.getByRole('region', { name: 'Selected plants' });
  await bar.getByRole('button', { name: 'Select all 100,012 matching' }).click();
  await bar.getByRole('button', { name: 'Delete selected' }).click();
  // The exact number, and what can be done about it.
  const dialog = page.getByRole('dialog', { name: 'Delete 100,012 plants?' });
  await expect(dialog).toContainText('You can stop it while it runs, and undo it for a few minutes.');
  await dialog.getByRole('button', { name: 'Delete 100,012 plants' }).click();
  await expect(bar).toContainText(/Working… [\d,]+ of 100,012/);
  await expect(bar.getByRole('progressbar', { name: 'Done so far' })).toBeVisible();
  await expect.poll(async () => number((await bar.textContent())!.match(/Working… ([\d,]+)/)?.[1] ?? '0'), { timeout: 60_000 }).toBeGreaterThanOrEqual(1_500);
  await shots(page, 'bulk-progress');
  await bar.getByRole('button', { name: 'Stop' }).click();
  const stopped = page.getByRole('status').filter({ hasText: /^Stopped: deleted [\d,]+ of 100,012 plants\. The rest are kept\./ });
  await expect(stopped).toBeVisible({ timeout: 30_000 });
  const deleted = number((await stopped.textContent())!.match(/deleted ([\d,]+)/)![1]!);
  expect(deleted).toBeGreaterThanOrEqual(1_500);
  expect(deleted).toBeLessThan(COUNT);
  // Nothing deleted after Stop: the total is the kept count of what is left.
  await expect(range).toHaveText(`1–25 of ${(COUNT - deleted).toLocaleString('en')}`);
  await shots(page, 'bulk-stopped');
  await stopped.getByRole('button', { name: 'Undo' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Put back ${deleted.toLocaleString('en')} plants.` })).toBeVisible({ timeout: 60_000 });
  await expect(range).toHaveText('1–25 of 100,012');
  await expect(page.locator('tr[data-plant-id]').first()).toHaveAttribute('data-plant-id', '2000001');
});

test('100,012 plants: "Tropical" merged into "tropical" from the tag filter (a bulk re-tag), then undone: each plant gets its own tag back', async ({ browser }) => {
  const page = await signedIn(browser, '/plants');
  const range = page.getByTestId('plants-range');
  await expect(range).toHaveText('1–25 of 100,012');
  // The tag list: typing offers both spellings with their counts; the rarer one is chosen, then merged.
  await page.getByRole('combobox', { name: 'Tag' }).fill('trop');
  await page.getByRole('option', { name: `Tropical ${TROPICAL}` }).click();
  await expect(range).toHaveText(`1–${TROPICAL} of ${TROPICAL}`);
  // Scrolled into view by the click alone, the filter would sit under the sticky top bar.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.getByRole('button', { name: 'Merge the tag “Tropical” into another' }).click();
  const dialog = page.getByRole('dialog', { name: `Merge the tag “Tropical” of ${TROPICAL} plants into another` });
  await dialog.getByLabel('New tag').fill('tropical');
  await shots(page, 'tag-merge');
  await dialog.getByRole('button', { name: 'Re-tag' }).click();
  const tagged = page.getByRole('status').filter({ hasText: `Tagged ${TROPICAL} plants “tropical”.` });
  await expect(tagged).toBeVisible();
  await expect(page.getByText('No plants match these filters.')).toBeVisible();
  await tagged.getByRole('button', { name: 'Undo' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Undone: ${TROPICAL} plants have their tags back.` })).toBeVisible();
  await expect(range).toHaveText(`1–${TROPICAL} of ${TROPICAL}`);
});

test('100,012 plants: tags are suggested with their counts where a tag is typed: the add form, the row editor, the bulk re-tag', async ({ browser }) => {
  // Of the plants past the first TROPICAL, every third is "tropical"; the first TROPICAL are "Tropical".
  const lower = Math.floor(COUNT / 3) - Math.floor(TROPICAL / 3);
  const expected = [`tropical ${lower.toLocaleString('en')} plants`, `Tropical ${TROPICAL} plants`];
  const page = await signedIn(browser, '/plants');
  await expect(page.getByTestId('plants-range')).toHaveText('1–25 of 100,012');
  /** What the input's list offers: each suggestion and its count. */
  const offered = (input: ReturnType<Page['getByLabel']>) =>
    input.evaluate((element) => [...((element as HTMLInputElement).list?.options ?? [])].map((option) => `${option.value} ${option.label}`));

  await page.getByRole('button', { name: 'Add plant' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a plant' });
  const addTag = dialog.getByLabel(/^Tag/);
  await addTag.fill('TROP');
  await expect.poll(() => offered(addTag)).toEqual(expected);
  await shots(page, 'tag-suggestions-add');
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  const row = page.locator('tr[data-plant-id]').first();
  await row.getByRole('button', { name: /^Edit plant/ }).click();
  const rowTag = row.getByLabel(/^Tag/);
  await rowTag.fill('trop');
  await expect.poll(() => offered(rowTag)).toEqual(expected);
  await rowTag.press('Escape');

  await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
  await page.getByRole('region', { name: 'Selected plants' }).getByRole('button', { name: 'Re-tag' }).click();
  const retag = page.getByRole('dialog').getByLabel('New tag');
  await retag.fill('Trop');
  await expect.poll(() => offered(retag)).toEqual(expected);
  await retag.fill('f');
  await expect.poll(() => offered(retag)).toEqual([`fern ${(COUNT - TROPICAL - lower).toLocaleString('en')} plants`]);
});
