import type { Page } from '@playwright/test';

import { cliToken, expect, plantRow, range, shownIds, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';

/**
 * Live updates that move nobody: what other people and programs change arrives while a person works in the
 * table, and their keyboard focus (on a grid cell, on a sort header), their selection, an open editor and the
 * rows' place on screen all stay; the news is placed truthfully (on this page, or not), and this tab's own
 * bulk change is not news.
 */

/** Where the keyboard focus is: the grid target and its row, or the element's text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return { target: element?.dataset.gridTarget ?? element?.textContent ?? element?.tagName ?? null, row: element?.closest('tr')?.getAttribute('data-plant-id') ?? null };
  });

/** The top of every row, and the window's scroll: what a layout shift would move. */
const rowTops = (page: Page) =>
  page.evaluate(() => ({ scrollY: window.scrollY, tops: [...document.querySelectorAll('tr[data-plant-id]')].map((row) => Math.round(row.getBoundingClientRect().top)) }));

async function patch(baseURL: string, token: string, id: bigint, body: Record<string, string | null>): Promise<void> {
  const response = await fetch(`${baseURL}/api/plants/${id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.text()).toBe(200);
}

test('a change made elsewhere moves nobody: focus on a cell and on a sort header, the selection, an open editor, the rows; news placed truthfully', async ({ page, rest, baseURL }) => {
  const name = uniqueName('steady');
  const token = await cliToken(name);
  const base = uniqueId();
  // Named 01…12 in id order, so that by name a page of 10 shows 01…10.
  const id = (index: number) => base + BigInt(index);
  await Promise.all(Array.from({ length: 12 }, (_, index) => rest.mustCreatePlant(token, { id: id(index + 1), name: `Plant ${String(index + 1).padStart(2, '0')}`, tag: 'a' })));
  await page.setViewportSize({ width: 1024, height: 700 });
  await signIn(page, token, name, '/plants?sort=name&size=10');
  await expect(range(page)).toHaveText('1–10 of 12');
  await expect(page.getByTestId('live')).toHaveAttribute('data-state', 'on');
  const news = page.getByTestId('live-news');

  await plantRow(page, id(2)).getByRole('checkbox').check();
  await plantRow(page, id(3)).locator('[data-grid-target="name"]').focus();
  const before = await rowTops(page);

  // A plant on another page is renamed: the news says so, and nothing here moves.
  await patch(baseURL!, token, id(12), { name: 'Plant 12, renamed' });
  await expect(news).toHaveText('1 plant changed elsewhere, not on this page.');
  expect(await focused(page)).toEqual({ target: 'name', row: String(id(3)) });
  expect(await rowTops(page)).toEqual(before);
  await expect(plantRow(page, id(2)).getByRole('checkbox')).toBeChecked();

  // A plant added elsewhere that sorts between two rows shown belongs on this page, and is said to.
  const header = page.getByRole('columnheader', { name: /^Name/ }).getByRole('button');
  await header.focus();
  await rest.mustCreatePlant(token, { id: id(100), name: 'Plant 05b' });
  await expect(news).toHaveText('1 new plant belongs here; 1 more changed elsewhere, not on this page.');
  expect(await focused(page)).toEqual({ target: await header.textContent(), row: null });
  expect(await rowTops(page)).toEqual(before);

  // An open editor keeps its text and the focus while its own row and another change elsewhere; its save
  // writes what this person changed only, not the tag somebody else set meanwhile.
  await plantRow(page, id(4)).locator('[data-grid-target="name"]').focus();
  await page.keyboard.press('Enter');
  const input = page.getByRole('textbox', { name: 'Name', exact: true });
  await expect(input).toBeFocused();
  await input.press('End');
  await input.pressSequentially(' edited');
  await patch(baseURL!, token, id(4), { tag: 'theirs' });
  await patch(baseURL!, token, id(5), { name: 'Plant 05, renamed' });
  await expect(plantRow(page, id(5)).locator('.live-mark')).toHaveText('changed elsewhere');
  await expect(plantRow(page, id(4)).locator('.live-mark')).toHaveText('changed elsewhere');
  await expect(input).toBeFocused();
  await expect(input).toHaveValue('Plant 04 edited');
  await expect(plantRow(page, id(2)).getByRole('checkbox')).toBeChecked();
  await input.press('Enter');
  await expect(plantRow(page, id(4)).locator('td.name')).toContainText('Plant 04 edited');
  const listed = JSON.parse((await rest.listPlantsText(token)).text.replace(/:(-?\d{16,})/g, ':"$1"')) as { id: string; name: string; tag?: string }[];
  expect(listed.find((plant) => plant.id === String(id(4)))).toEqual({ id: String(id(4)), name: 'Plant 04 edited', tag: 'theirs' });

  // Refresh takes the news in, and the cursor goes to the table, not to <body>.
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expect.poll(() => shownIds(page)).toContain(String(id(100)));
  await expect(news).toHaveText('');
  expect((await focused(page)).row).not.toBeNull();
});

test('this tab’s own bulk re-tag of 210 plants is not news; a change by someone else afterwards is', async ({ page, rest, baseURL }) => {
  const name = uniqueName('own-bulk');
  const token = await cliToken(name);
  const base = uniqueId();
  // More than the feed sends one by one (200 a read): it sends them as one "resync".
  for (let start = 0; start < 210; start += 30) {
    await Promise.all(Array.from({ length: 30 }, (_, index) => rest.mustCreatePlant(token, { id: base + BigInt(start + index), name: `Own ${start + index}` })));
  }
  await signIn(page, token, name, '/plants?size=10');
  await expect(range(page)).toHaveText('1–10 of 210');
  await expect(page.getByTestId('live')).toHaveAttribute('data-state', 'on');
  await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
  const bar = page.getByRole('region', { name: 'Selected plants' });
  await bar.getByRole('button', { name: 'Select all 210 matching' }).click();
  await bar.getByRole('button', { name: 'Re-tag' }).click();
  await page.getByRole('dialog').getByLabel('New tag').fill('mine');
  await page.getByRole('dialog').getByRole('button', { name: 'Re-tag' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Tagged 210 plants “mine”.' })).toBeVisible();
  // The echo of the work arrives within a second; what the page holds back is let through 4 s after the work.
  await page.waitForTimeout(6_000);
  const news = page.getByTestId('live-news');
  await expect(news).toHaveText('');
  await patch(baseURL!, token, base + 205n, { name: 'Renamed by a program' });
  await expect(news).toHaveText('1 plant changed elsewhere, not on this page.');
});
