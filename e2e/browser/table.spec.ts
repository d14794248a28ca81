import { readFileSync } from 'node:fs';

import type { Page } from '@playwright/test';

import { seriousViolations } from '@test-support/browser-checks';
import { cliToken, expect, plantRow, range, shownIds, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';
import { exportHeader, exportLine } from '@test-support/plant-fields';

/** The admin page as a data manager: sorting, the tag choice, columns, CSV, the keyboard grid, undo, select all. */

async function seed(rest: { mustCreatePlant: (token: string, plant: { id: bigint; name: string; tag?: string }) => Promise<void> }, token: string, plants: { id: bigint; name: string; tag?: string }[]) {
  for (const plant of plants) await rest.mustCreatePlant(token, plant);
}

const focusedCell = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return { target: element?.dataset.gridTarget ?? element?.tagName ?? null, row: element?.closest('tr')?.getAttribute('data-plant-id') ?? null };
  });

test.describe('the plants table as a grid', () => {
  test('sorts by name, tag and created both ways, in the address; Back restores the order', async ({ page, rest }) => {
    const name = uniqueName('sorter');
    const token = await cliToken(name);
    const base = uniqueId();
    await seed(rest, token, [
      { id: base + 1n, name: 'beta', tag: 'b' },
      { id: base + 2n, name: 'Alpha' },
      { id: base + 3n, name: 'gamma', tag: 'a' },
    ]);
    await signIn(page, token, name);
    await expect.poll(() => shownIds(page)).toEqual([base + 1n, base + 2n, base + 3n].map(String));
    const header = (label: string) => page.getByRole('columnheader', { name: new RegExp(`^${label}`) });
    await header('Name').getByRole('button').click();
    await expect(page).toHaveURL(/sort=name/);
    await expect(header('Name')).toHaveAttribute('aria-sort', 'ascending');
    await expect.poll(() => shownIds(page)).toEqual([base + 2n, base + 1n, base + 3n].map(String));
    await header('Name').getByRole('button').click();
    await expect(page).toHaveURL(/sort=name&dir=desc/);
    await expect.poll(() => shownIds(page)).toEqual([base + 3n, base + 1n, base + 2n].map(String));
    // Untagged plants come after every tag (and first, descending).
    await header('Tag').getByRole('button').click();
    await expect.poll(() => shownIds(page)).toEqual([base + 3n, base + 1n, base + 2n].map(String));
    await page.goBack();
    await expect(header('Name')).toHaveAttribute('aria-sort', 'descending');
    await expect.poll(() => shownIds(page)).toEqual([base + 3n, base + 1n, base + 2n].map(String));
  });

  test('the tag filter offers the tags that exist, with counts, in any case, and applies on choice only', async ({ page, rest }) => {
    const name = uniqueName('tagger');
    const token = await cliToken(name);
    const base = uniqueId();
    await seed(rest, token, [
      { id: base + 1n, name: 'One', tag: 'tropical' },
      { id: base + 2n, name: 'Two', tag: 'tropical' },
      { id: base + 3n, name: 'Three', tag: 'trailing' },
      { id: base + 4n, name: 'Four', tag: 'shade' },
    ]);
    await signIn(page, token, name);
    await expect(range(page)).toHaveText('1–4 of 4');
    const box = page.getByRole('combobox', { name: 'Tag' });
    await box.fill('TR');
    const list = page.getByRole('listbox', { name: 'Tags' });
    await expect(list.getByRole('option')).toHaveText(['tropical2', 'trailing1']);
    // Typing applied nothing.
    await expect(range(page)).toHaveText('1–4 of 4');
    await expect(page).not.toHaveURL(/tag=/);
    await box.press('ArrowDown');
    await expect(box).toHaveAttribute('aria-activedescendant', /^./);
    await box.press('Enter');
    await expect(page).toHaveURL(/tag=tropical/);
    await expect(range(page)).toHaveText('1–2 of 2');
    // "Tropical" is the tag "tropical" when that is the tag that exists.
    await box.fill('Trailing');
    await expect(list.getByRole('option')).toHaveText(['trailing1']);
    await box.press('Enter');
    await expect(page).toHaveURL(/tag=trailing/);
    await expect(range(page)).toHaveText('1–1 of 1');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: /Remove the tag filter/ }).click();
    await expect(range(page)).toHaveText('1–4 of 4');
  });

  test('the column chooser is remembered by the browser; the CSV export is the view, exact and safe to open', async ({ page, rest, adminToken }) => {
    const name = uniqueName('exporter');
    const token = await cliToken(name);
    const big = 9223372036854775000n + (uniqueId() % 700n);
    await seed(rest, token, [
      { id: big, name: '=HYPERLINK("http://evil","click")', tag: 'csv' },
      { id: big - 1n, name: 'Comma, "quoted"', tag: 'csv' },
      { id: big - 2n, name: '-negative', tag: 'other' },
    ]);
    await signIn(page, token, name);
    await page.getByRole('button', { name: /Columns/ }).click();
    await page.getByRole('checkbox', { name: 'Tag' }).uncheck();
    await expect(page.getByRole('columnheader', { name: /^Tag/ })).toHaveCount(0);
    await page.keyboard.press('Escape');
    await page.reload();
    await expect(page.locator('tr[data-plant-id]')).toHaveCount(3);
    await expect(page.getByRole('columnheader', { name: /^Tag/ })).toHaveCount(0);
    await page.getByRole('button', { name: /Columns/ }).click();
    await page.getByRole('checkbox', { name: 'Tag' }).check();
    await expect(page.getByRole('columnheader', { name: /^Tag/ })).toHaveCount(1);

    // The view: tag "csv", by name descending.
    await page.goto(`/plants?tag=csv&sort=name&dir=desc`);
    await expect(range(page)).toHaveText('1–2 of 2');
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: /Export CSV/ }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^plants-\d{4}-\d{2}-\d{2}\.csv$/);
    const bytes = readFileSync((await file.path())!);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.subarray(3).toString('utf8')).toBe(
      [
        exportHeader(),
        exportLine(big - 1n, { name: '"Comma, ""quoted"""', tag: 'csv' }),
        exportLine(big, { name: `"'=HYPERLINK(""http://evil"",""click"")"`, tag: 'csv' }),
        '',
      ].join('\r\n'),
    );
    // The same file for a REST client, and an admin gets owner and creation time.
    const rest2 = await fetch(`${process.env.E2E_BASE_URL}/api/plants/export?owner=${name}&sort=id`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(rest2.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    const lines = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await rest2.arrayBuffer()).split('\r\n');
    expect(lines[0]).toBe(`\uFEFF${exportHeader('owner', 'created')}`);
    expect(lines[1]).toMatch(new RegExp(`^${exportLine(big - 2n, { name: "'-negative", tag: 'other' })},${name},\\d{4}-\\d\\d-\\d\\dT`));
  });

  test('arrow keys move between cells and rows; Enter edits, Escape cancels, focus returns to the row; an unsaved edit is kept', async ({ page, rest }) => {
    const name = uniqueName('keys');
    const token = await cliToken(name);
    const base = uniqueId();
    await seed(rest, token, [
      { id: base + 1n, name: 'First', tag: 'a' },
      { id: base + 2n, name: 'Second', tag: 'b' },
      { id: base + 3n, name: 'Third', tag: 'c' },
    ]);
    await signIn(page, token, name);
    await expect(page.locator('tr[data-plant-id]')).toHaveCount(3);
    // One tab stop for the whole table.
    await plantRow(page, base + 1n).getByRole('checkbox').focus();
    await page.keyboard.press('Tab');
    expect((await focusedCell(page)).row).toBeNull();
    await plantRow(page, base + 1n).getByRole('checkbox').focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    expect(await focusedCell(page)).toEqual({ target: 'name', row: String(base + 1n) });
    await page.keyboard.press('ArrowDown');
    expect(await focusedCell(page)).toEqual({ target: 'name', row: String(base + 2n) });
    await page.keyboard.press('Enter');
    const nameInput = plantRow(page, base + 2n).getByLabel('Name');
    await expect(nameInput).toBeFocused();
    await nameInput.fill('Second, renamed');
    // Another row's editor cannot throw this text away: the page says so and keeps it.
    await page.keyboard.press('Escape');
    await expect(plantRow(page, base + 2n).locator('td.name')).toHaveText(/^Second/);
    expect(await focusedCell(page)).toEqual({ target: 'name', row: String(base + 2n) });
    await page.keyboard.press('Enter');
    await plantRow(page, base + 2n).getByLabel('Name').fill('Second, renamed');
    await plantRow(page, base + 3n).getByRole('button', { name: /^Edit plant/ }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Save the row you are editing' })).toBeVisible();
    await expect(plantRow(page, base + 2n).getByLabel('Name')).toHaveValue('Second, renamed');
    await expect(plantRow(page, base + 2n).getByLabel('Name')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(plantRow(page, base + 2n).locator('td.name')).toHaveText('Second, renamed');
    expect(await focusedCell(page)).toEqual({ target: 'name', row: String(base + 2n) });

    // Undo the rename while its notice shows.
    const saved = page.getByRole('status').filter({ hasText: `Saved plant “Second, renamed” (id ${base + 2n}).` });
    await saved.getByRole('button', { name: 'Undo' }).click();
    await expect(plantRow(page, base + 2n).locator('td.name')).toHaveText('Second');
    expect((await rest.listPlantsText(token)).text).toContain(`{"id":${base + 2n},"name":"Second","tag":"b"}`);
  });

  test('a deleted plant comes back with Undo; notices isolate names and leave on their own', async ({ page, rest }) => {
    const name = uniqueName('undo');
    const token = await cliToken(name);
    const id = uniqueId();
    await rest.mustCreatePlant(token, { id, name: 'Max id \u202eevil name', tag: 'x' });
    await signIn(page, token, name);
    await plantRow(page, id).getByRole('button', { name: /^Delete plant/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    const notice = page.getByRole('status').locator('.toast').filter({ hasText: 'Deleted plant' });
    await expect(notice).toBeVisible();
    // The name is in a <bdi>: the sentence after it, id digits included, keeps its order.
    await expect(notice.locator('bdi')).toHaveText('Max id \u202eevil name');
    const order = await notice.locator('p').evaluate((element) => {
      const bdi = element.querySelector('bdi')!;
      const after = document.createRange();
      after.setStartAfter(bdi);
      after.setEnd(element, element.childNodes.length);
      const rects = [...after.getClientRects()].filter((rect) => rect.width > 0);
      return { nameRight: bdi.getBoundingClientRect().right, textLeft: rects[0]?.left ?? 0 };
    });
    expect(order.textLeft).toBeGreaterThanOrEqual(order.nameRight - 1);
    await expect(plantRow(page, id)).toHaveCount(0);
    await notice.getByRole('button', { name: 'Undo' }).click();
    await expect(plantRow(page, id)).toBeVisible();
    expect((await rest.listPlantsText(token)).text).toBe(`[{"id":${id},"name":"Max id \u202eevil name","tag":"x"}]`);
    // Notices leave on their own (8 s; not while the pointer rests on them).
    await page.mouse.move(0, 0);
    await expect(page.locator('.toast')).toHaveCount(0, { timeout: 20_000 });
  });

  test('select all matching across pages, re-tag and delete them all; reachable at 375 px', async ({ page, rest }) => {
    await page.setViewportSize({ width: 375, height: 700 });
    const name = uniqueName('many');
    const token = await cliToken(name);
    const base = uniqueId();
    await Promise.all(Array.from({ length: 30 }, (_, index) => rest.mustCreatePlant(token, { id: base + BigInt(index), name: `Bulk ${index}`, tag: index < 27 ? 'old' : 'keep' })));
    await signIn(page, token, name, '/plants?size=10');
    await expect(range(page)).toHaveText('1–10 of 30');
    await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
    const bar = page.getByRole('region', { name: 'Selected plants' });
    await expect(bar).toContainText('10 plants selected');
    await bar.getByRole('button', { name: 'Select all 30 matching' }).click();
    await expect(bar).toContainText('30 plants selected: all 30 matching');
    // Untick one on the next page: it stays out.
    await page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button', { name: 'Next page' }).click();
    await expect(range(page)).toHaveText('11–20 of 30');
    await plantRow(page, base + 12n).getByRole('checkbox').uncheck();
    await expect(bar).toContainText('29 plants selected: all 30 matching but 1');
    for (const button of await bar.getByRole('button').all()) {
      const box = (await button.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
    }
    await bar.getByRole('button', { name: 'Re-tag' }).click();
    await page.getByRole('dialog').getByLabel('New tag').fill('new');
    await page.getByRole('dialog').getByRole('button', { name: 'Re-tag' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Tagged 29 plants “new”.' })).toBeVisible();
    const listed = JSON.parse((await rest.listPlantsText(token)).text.replace(/:(-?\d{16,})/g, ':"$1"')) as { id: string; tag: string }[];
    expect(listed.filter((plant) => plant.tag === 'new')).toHaveLength(29);
    expect(listed.find((plant) => plant.id === String(base + 12n))?.tag).toBe('old');

    await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
    await bar.getByRole('button', { name: 'Select all 30 matching' }).click();
    await bar.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete 30 plants' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Deleted 30 plants.' })).toBeVisible();
    expect((await rest.listPlantsText(token)).text).toBe('[]');
  });
});

test('the grid’s own widgets are axe clean in light and dark: tag choices, column chooser, select-all bar, re-tag dialog, undo notice', async ({ page, rest }) => {
  const name = uniqueName('axe-grid');
  const token = await cliToken(name);
  const base = uniqueId();
  await seed(rest, token, Array.from({ length: 12 }, (_, index) => ({ id: base + BigInt(index), name: `Grid ${index}`, tag: index % 2 ? 'tropical' : 'trailing' })));
  await signIn(page, token, name, '/plants?size=10');
  await expect(range(page)).toHaveText('1–10 of 12');
  // The widget and what it sits in; the page around it is scanned per view and theme by layout.spec.ts.
  const clean = async (state: string, within: string[]) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page, within), `${state}, ${scheme}`).toEqual([]);
    }
  };

  await page.getByRole('combobox', { name: 'Tag' }).fill('tr');
  await expect(page.getByRole('listbox', { name: 'Tags' }).getByRole('option')).toHaveCount(2);
  await page.getByRole('combobox', { name: 'Tag' }).press('ArrowDown');
  await clean('the tag choices, one active', ['.toolbar']);
  await page.getByRole('combobox', { name: 'Tag' }).press('Escape');
  await page.getByRole('combobox', { name: 'Tag' }).fill('');

  await page.getByRole('button', { name: /Columns/ }).click();
  await expect(page.getByRole('checkbox', { name: 'Tag' })).toBeVisible();
  await clean('the column chooser', ['.view-head']);
  await page.keyboard.press('Escape');

  await page.getByRole('checkbox', { name: 'Select every plant on this page' }).check();
  const bar = page.getByRole('region', { name: 'Selected plants' });
  await bar.getByRole('button', { name: 'Select all 12 matching' }).click();
  await expect(bar).toContainText('12 plants selected: all 12 matching');
  await clean('the select-all bar', ['.bulkbar', 'main table']);
  await bar.getByRole('button', { name: 'Re-tag' }).click();
  await expect(page.getByRole('dialog').getByLabel('New tag')).toBeVisible();
  await clean('the re-tag dialog', ['dialog[open]']);
  await page.keyboard.press('Escape');
  await bar.getByRole('button', { name: 'Clear selection' }).click();
  await expect(bar).toHaveCount(0);

  await plantRow(page, base).getByRole('button', { name: /^Delete plant/ }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
  const notice = page.getByRole('status').locator('.toast').filter({ hasText: 'Deleted plant' });
  await expect(notice.getByRole('button', { name: 'Undo' })).toBeVisible();
  // The pointer rests on the notice: it stays while axe looks.
  await notice.hover();
  await clean('the undo notice', ['.notices']);
});
