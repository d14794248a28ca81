import type { Page } from '@playwright/test';

import { OTHER_PLANT_FIELDS, PLANT_FIELD_UI } from '@/ui/plants/fields';
import { cliToken, expect, range, type Rest, shownIds, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';

/**
 * Which columns the plants table shows depends on the window's width, never on the page's data; every sort is in
 * reach at every width (a sort menu when a sort has no header to click) and the active sort is always in view.
 */

/** A member's plants: one with an id of 20 characters (an int64 with its sign), the others of 4 digits. */
async function seed(rest: Rest) {
  const owner = uniqueName('columns');
  const token = await cliToken(owner);
  const long = -uniqueId();
  expect(long.toString()).toHaveLength(20);
  await rest.mustCreatePlant(token, { id: long, name: 'Long id' });
  const short: bigint[] = [];
  // Short ids are few: one another test took is taken again at random.
  while (short.length < 11) {
    const id = BigInt(1000 + Math.floor(Math.random() * 9000));
    const response = await rest.createPlant(token, { id, name: `Short id ${short.length}` });
    if (response.status === 200) short.push(id);
    else expect(response.status, await response.text()).toBe(409);
  }
  return { owner, long, short };
}

const columnsShown = (page: Page) => page.locator('table.plants-table').getAttribute('data-columns');

test('at 1024 px a page with a 20-character id shows the same columns as one without, and every sort is in reach', async ({ page, rest, adminToken }) => {
  const { owner, long } = await seed(rest);
  await page.setViewportSize({ width: 1024, height: 800 });
  await signIn(page, adminToken, 'admin', `/plants?owner=${owner}&size=10`);
  await expect(range(page)).toHaveText('1–10 of 12');
  expect((await shownIds(page))[0]).toBe(long.toString());
  const first = await columnsShown(page);
  await page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button', { name: 'Next page' }).click();
  await expect(range(page)).toHaveText('11–12 of 12');
  expect(await shownIds(page)).not.toContain(long.toString());
  expect(await columnsShown(page)).toBe(first);

  // Whatever 1024 px folds, its sort stays in reach: a header, or the menu.
  const headers = (await page.locator('thead th[class^="th-"] .sort-button').allTextContents()).map((text) => text.trim().toLowerCase());
  const menu = page.getByRole('combobox', { name: 'Sort' });
  for (const key of ['id', 'name', 'tag', 'owner', 'created']) {
    if (headers.includes(key)) continue;
    await expect(menu).toBeVisible();
    await expect(menu.locator(`option[value="${key} desc"]`)).toHaveCount(1);
  }
});

test('at 375 px every sort is in the sort menu; a sort by Created is shown as active, there and after a reload', async ({ page, rest, adminToken, shot }) => {
  const { owner, long, short } = await seed(rest);
  await page.setViewportSize({ width: 375, height: 800 });
  await signIn(page, adminToken, 'admin', `/plants?owner=${owner}&size=10`);
  await expect(range(page)).toHaveText('1–10 of 12');
  const menu = page.getByRole('combobox', { name: 'Sort' });
  await expect(menu).toHaveValue('id asc');
  await expect(menu.locator('option')).toHaveText([
    'Id, lowest first',
    'Id, highest first',
    'Name, A to Z',
    'Name, Z to A',
    'Tag, A to Z (untagged last)',
    'Tag, Z to A (untagged first)',
    'Owner, A to Z',
    'Owner, Z to A',
    'Created, oldest first',
    'Created, newest first',
  ]);
  await menu.selectOption({ label: 'Created, newest first' });
  await expect(page).toHaveURL(/sort=created&dir=desc/);
  // Newest first: the last one added leads.
  await expect.poll(async () => (await shownIds(page))[0]).toBe(short[10]!.toString());
  await expect(menu).toHaveValue('created desc');
  await expect(page.getByRole('grid')).toHaveAccessibleName(/by created descending/);
  // The order's values lead each row's folded line, ahead of a long id.
  expect(await page.locator('tr[data-plant-id] .folded').evaluateAll((lines) => lines.map((line) => line.firstElementChild?.tagName))).toEqual(Array(10).fill('TIME'));
  await page.reload();
  await expect(menu).toHaveValue('created desc');
  await menu.selectOption({ label: 'Created, oldest first' });
  await expect.poll(async () => (await shownIds(page))[0]).toBe(long.toString());
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, `sort-menu-375-${scheme}`);
  }
});

test("each declared field's column is as wide as the page's words for it say (ui/plants/fields.ts)", async ({ page, rest, adminToken }) => {
  const { owner } = await seed(rest);
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(page, adminToken, 'admin', `/plants?owner=${owner}&size=10`);
  await expect(range(page)).toHaveText('1–10 of 12');
  const rem = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
  for (const field of OTHER_PLANT_FIELDS) {
    const { width } = PLANT_FIELD_UI[field].column;
    if (width === 'fill') continue;
    const header = page.locator(`table.plants-table thead th.th-${field}`);
    await expect(header, `${field} is shown at 1280 px`).toBeVisible();
    expect(Math.round((await header.boundingBox())!.width), field).toBe(Math.round(width * rem));
  }
});
