import type { Page } from '@playwright/test';

import { addPlant, cliToken, expect, plantForm, plantRow, range, shownIds, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Types into the tag filter and chooses the tag from its list (a tag applies when chosen). */
async function chooseTag(page: Page, tag: string): Promise<void> {
  const box = page.getByRole('combobox', { name: 'Tag' });
  await box.fill(tag);
  await page.getByRole('listbox', { name: 'Tags' }).getByRole('option', { name: new RegExp(`^${tag}\\b`) }).first().click();
}

/** Holds every tRPC call of one procedure for `ms`, so what the page shows meanwhile can be checked. */
async function delay(page: Page, procedure: string, ms: number): Promise<void> {
  await page.route(`**/api/trpc/**`, async (route) => {
    if (new URL(route.request().url()).pathname.includes(procedure)) await new Promise((resolve) => setTimeout(resolve, ms));
    await route.continue();
  });
}

test.describe('plants', () => {
  test('add through the dialog with the proposed id, with and without a tag; the empty state first', async ({ page, rest, shot }) => {
    const name = uniqueName('creator');
    const token = await cliToken(name);
    await signIn(page, token, name);
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await page.getByRole('button', { name: 'Add a plant' }).click();
    const form = plantForm(page);
    await expect(form.dialog).toBeVisible();
    await expect(form.name).toBeFocused();
    // A member with no plants gets id 1 proposed, unless someone else took it.
    await expect(form.id).not.toHaveValue('');
    const proposed = BigInt(await form.id.inputValue());
    await shot(page, '05-add-dialog');
    await form.name.fill('Monstera deliciosa');
    await form.tag.fill('tropical');
    await form.name.press('Enter');
    await expect(form.dialog).toHaveCount(0);
    await expect(page.getByRole('status').filter({ hasText: `Added plant “Monstera deliciosa” (id ${proposed}), tag “tropical”.` })).toBeAttached();
    await expect(plantRow(page, proposed).locator('td.tag')).toHaveText('tropical');
    // Enter then Tab used to show "Id is required" beside the success: nothing of the sort now.
    await page.keyboard.press('Tab');
    await expect(page.locator('.field__error')).toHaveCount(0);

    await addPlant(page, { name: 'Ficus lyrata' });
    await expect(page.locator('tr[data-plant-id]')).toHaveCount(2);
    const ids = await shownIds(page);
    expect(BigInt(ids[1]!)).toBe(proposed + 1n);
    await expect(plantRow(page, ids[1]!).locator('td.tag')).toHaveText('—');
    await expect(range(page)).toHaveText('1–2 of 2');
    await shot(page, '06-plants-created');

    const listed = await rest.listPlantsText(token);
    expect(listed.text).toBe(`[{"id":${proposed},"name":"Monstera deliciosa","tag":"tropical"},{"id":${proposed + 1n},"name":"Ficus lyrata"}]`);
  });

  test('the form checks with the router schema’s rules, before any request; the server’s refusals land by their field', async ({ page, rest, adminToken, shot }) => {
    const name = uniqueName('validator');
    await signIn(page, await cliToken(name), name);
    let creates = 0;
    page.on('request', (request) => {
      if (request.url().includes('plants.create')) creates += 1;
    });
    const form = plantForm(page);
    await form.open.click();
    // The proposed id arrives first; then the person empties the field.
    await expect(form.id).not.toHaveValue('');
    await form.id.fill('');
    await form.submit.click();
    await expect(form.dialog.locator('#plant-name-error')).toHaveText('Name must not be empty.');
    await expect(form.dialog.locator('#plant-id-error')).toHaveText('Id is required.');
    await expect(form.name).toBeFocused();

    const cases: [string, string, string, 'plant-id' | 'plant-name' | 'plant-tag', RegExp][] = [
      ['12abc', 'Fern', '', 'plant-id', /id must be an integer/i],
      ['9223372036854775808', 'Fern', '', 'plant-id', /id must be at most 9223372036854775807/i],
      ['1', '   ', '', 'plant-name', /name must not be only white space/i],
      ['1', '\u200b\u3164\u2800', '', 'plant-name', /name must have at least one visible character/i],
      ['1', 'x'.repeat(201), '', 'plant-name', /name must be at most 200 characters/i],
      ['1', 'bell\u0007', '', 'plant-name', /name must not contain control characters/i],
      ['1', 'Fern', 't'.repeat(101), 'plant-tag', /tag must be at most 100 characters/i],
    ];
    for (const [id, plantName, tag, field, message] of cases) {
      await form.id.fill(id);
      await form.name.fill(plantName);
      await form.tag.fill(tag);
      await form.submit.click();
      await expect(form.dialog.locator(`#${field}-error`)).toHaveText(message);
      await expect(form.dialog.locator(`#${field}`)).toBeFocused();
    }
    await shot(page, '07-field-validation');
    expect(creates).toBe(0);

    // An id someone else holds: the server says so, next to the id field.
    const taken = uniqueId();
    await rest.mustCreatePlant(adminToken, { id: taken, name: 'Taken by admin' });
    await form.id.fill(taken.toString());
    await form.name.fill('Mine');
    await form.tag.fill('');
    await form.submit.click();
    await expect(form.dialog.locator('#plant-id-error')).toHaveText(`A plant with id ${taken} already exists.`);
    await expect(form.id).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(form.dialog).toHaveCount(0);
  });

  test('int64 ids round-trip exactly: 9223372036854775807, -9223372036854775808, 9007199254740993', async ({ page, rest, adminToken }) => {
    const ids = [INT64_MAX, INT64_MIN, 9007199254740993n];
    for (const id of ids) await rest.deletePlant(adminToken, id);
    const name = uniqueName('int64');
    const token = await cliToken(name);
    await signIn(page, token, name);
    for (const id of ids) {
      await addPlant(page, { id, name: `Plant ${id}` });
      await expect(plantRow(page, id)).toBeVisible();
    }
    await page.reload();
    await expect(page.locator('tr[data-plant-id] td.id')).toHaveText([INT64_MIN.toString(), '9007199254740993', INT64_MAX.toString()]);
    const listed = await rest.listPlantsText(token);
    expect(listed.text).toBe(
      `[{"id":-9223372036854775808,"name":"Plant -9223372036854775808"},{"id":9007199254740993,"name":"Plant 9007199254740993"},{"id":9223372036854775807,"name":"Plant 9223372036854775807"}]`,
    );
    await plantRow(page, INT64_MAX).getByRole('button', { name: /^Delete plant/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    await expect(plantRow(page, INT64_MAX)).toHaveCount(0);
    expect((await rest.listPlantsText(token)).text).not.toContain('9223372036854775807');
  });

  test('the search matches what people see: "cafe" finds "Café", "fern hidden" a name with zero-width characters between the words', async ({ page, rest }) => {
    const name = uniqueName('folding');
    const token = await cliToken(name);
    const [cafe, hidden, other] = [uniqueId(), uniqueId(), uniqueId()];
    await rest.mustCreatePlant(token, { id: cafe, name: 'Café au lait fern' });
    await rest.mustCreatePlant(token, { id: hidden, name: 'Fern\u200b \u200bhidden' });
    await rest.mustCreatePlant(token, { id: other, name: 'Cactus' });
    await signIn(page, token, name);
    const search = page.getByLabel('Search names');
    for (const [typed, found] of [
      ['cafe', [cafe]],
      ['CAFÉ AU', [cafe]],
      ['fern hidden', [hidden]],
      ['fern', [cafe, hidden]],
    ] as const) {
      await search.fill(typed);
      await search.press('Enter');
      // The table's default order is by id.
      await expect.poll(() => shownIds(page), `q=${typed}`).toEqual([...found].sort((a, b) => (a < b ? -1 : 1)).map(String));
    }
  });

  test('search, tag filter and paging live in the address: reload, Back and a shared link land on the same view', async ({ page, browser, baseURL, rest, shot }) => {
    const name = uniqueName('pager');
    const token = await cliToken(name);
    const base = uniqueId();
    // 60 plants: every third a "Fern", tags a/b by parity; created out of order.
    const ids = Array.from({ length: 60 }, (_, index) => base + BigInt(index) * 3n);
    const plants = [...ids].reverse().map((id, index) => ({ id, name: index % 3 === 0 ? `Fern ${id}` : `Palm ${id}`, tag: id % 2n === 0n ? 'a' : 'b' }));
    await Promise.all(plants.map((plant) => rest.mustCreatePlant(token, plant)));
    const ferns = plants.filter((plant) => plant.name.startsWith('Fern'));
    const fernsTaggedA = ferns.filter((plant) => plant.tag === 'a').map((plant) => plant.id).sort((x, y) => (x < y ? -1 : 1));
    await signIn(page, token, name);
    await expect(range(page)).toHaveText('1–25 of 60');
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(0, 25).map(String));
    const pager = page.getByRole('navigation', { name: 'Plant pages' });
    await expect(pager.getByRole('button', { name: 'Previous page' })).toHaveAttribute('aria-disabled', 'true');

    await pager.getByRole('button', { name: 'Next page' }).click();
    await expect(range(page)).toHaveText('26–50 of 60');
    await expect(page).toHaveURL(new RegExp(`after=${ids[24]}`));
    await pager.getByRole('button', { name: 'Last page' }).click();
    await expect(range(page)).toHaveText('51–60 of 60');
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(50).map(String));
    await expect(page).toHaveURL(/page=last/);
    await page.reload();
    await expect(range(page)).toHaveText('51–60 of 60');
    await page.goBack();
    await expect(range(page)).toHaveText('26–50 of 60');
    await pager.getByRole('button', { name: 'Previous page' }).click();
    await expect(range(page)).toHaveText('1–25 of 60');

    // Search by name, any case; then a tag on top; paging keeps both.
    await page.getByLabel('Search names').fill('FERN');
    await page.getByLabel('Search names').press('Enter');
    await expect(range(page)).toHaveText('1–20 of 20');
    await expect(page).toHaveURL(/q=FERN/);
    expect(ferns).toHaveLength(20);
    await chooseTag(page, 'a');
    await expect(range(page)).toHaveText(`1–${fernsTaggedA.length} of ${fernsTaggedA.length}`);
    await expect(page).toHaveURL(/tag=a/);
    await expect.poll(() => shownIds(page)).toEqual(fernsTaggedA.map(String));
    await page.getByLabel('Plants per page').selectOption('10');
    await expect(page).toHaveURL(/size=10/);
    await shot(page, '08-filtered');

    // A shared link, in another browser session, lands on the same view.
    const url = page.url();
    const other = await browser.newContext({ baseURL });
    const otherPage = await other.newPage();
    await otherPage.goto(url);
    await otherPage.getByLabel('API token').fill(token);
    await otherPage.getByRole('button', { name: 'Sign in' }).click();
    await expect(range(otherPage)).toHaveText(await range(page).innerText());
    await expect(otherPage.getByLabel('Search names')).toHaveValue('FERN');
    await expect(otherPage.getByRole('combobox', { name: 'Tag' })).toHaveValue('a');
    await other.close();

    // Clearing the filters keeps the page size.
    await page.getByRole('button', { name: 'Clear filters' }).first().click();
    await expect(range(page)).toHaveText('1–10 of 60');
    await expect(page.getByLabel('Search names')).toHaveValue('');
  });

  test('rename and re-tag in place; an emptied tag is removed', async ({ page, rest, shot }) => {
    const name = uniqueName('renamer');
    const token = await cliToken(name);
    const id = uniqueId();
    await rest.mustCreatePlant(token, { id, name: 'Fenr', tag: 'shdae' });
    await signIn(page, token, name);
    const row = plantRow(page, id);
    await row.getByRole('button', { name: /^Edit plant/ }).click();
    const nameInput = row.getByLabel('Name');
    await expect(nameInput).toBeFocused();
    await nameInput.fill('\u200b');
    await nameInput.press('Enter');
    await expect(row.locator('.field__error')).toHaveText(/visible character/);
    await nameInput.fill('Fern');
    await row.getByLabel(/^Tag/).fill('shade');
    await shot(page, '09-inline-edit');
    await nameInput.press('Enter');
    await expect(row.locator('td.name')).toHaveText('Fern');
    await expect(row.locator('td.tag')).toHaveText('shade');
    expect((await rest.listPlantsText(token)).text).toBe(`[{"id":${id},"name":"Fern","tag":"shade"}]`);

    await row.getByRole('button', { name: /^Edit plant/ }).click();
    await row.getByLabel(/^Tag/).fill('');
    await row.getByRole('button', { name: /^Save plant/ }).click();
    await expect(row.locator('td.tag')).toHaveText('—');
    expect((await rest.listPlantsText(token)).text).toBe(`[{"id":${id},"name":"Fern"}]`);

    // Escape leaves without saving.
    await row.getByRole('button', { name: /^Edit plant/ }).click();
    await row.getByLabel('Name').fill('Not this');
    await row.getByLabel('Name').press('Escape');
    await expect(row.locator('td.name')).toHaveText('Fern');
  });

  test('bulk delete asks first; plants deleted elsewhere meanwhile count as done; Undo puts the rest back', async ({ page, rest, shot }) => {
    const name = uniqueName('bulk');
    const token = await cliToken(name);
    const base = uniqueId();
    const ids = [base, base + 1n, base + 2n, base + 3n];
    for (const id of ids) await rest.mustCreatePlant(token, { id, name: `Plant ${id}` });
    await signIn(page, token, name);
    await expect.poll(() => shownIds(page)).toEqual(ids.map(String));

    for (const id of ids.slice(0, 3)) await plantRow(page, id).getByRole('checkbox').check();
    const bulk = page.getByRole('region', { name: 'Selected plants' });
    await expect(bulk).toContainText('3 plants selected');
    // Another session deletes one of them meanwhile.
    expect((await rest.deletePlant(token, ids[1]!)).status).toBe(204);

    await bulk.getByRole('button', { name: 'Delete selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 3 plants?' });
    await expect(dialog).toContainText(`Plant ${ids[2]}`);
    await shot(page, '10-bulk-confirm');
    await dialog.getByRole('button', { name: 'Delete 3 plants' }).click();
    // The goal (those plants gone) was met for all three: one was simply gone already.
    const notice = page.getByRole('status').filter({ hasText: 'Deleted 3 plants (1 was deleted elsewhere already).' });
    await expect(notice).toBeVisible();
    await expect.poll(() => shownIds(page)).toEqual([ids[3]!.toString()]);
    await shot(page, '11-bulk-already-gone');
    expect((await rest.listPlantsText(token)).text).toBe(`[{"id":${ids[3]},"name":"Plant ${ids[3]}"}]`);
    // Undo, while the notice shows: the two this page deleted come back as they were.
    await notice.getByRole('button', { name: 'Undo' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Put back 2 plants.' })).toBeVisible();
    await expect.poll(() => shownIds(page)).toEqual([ids[0], ids[2], ids[3]].map(String));
  });

  test('a save refused for a plant deleted elsewhere says so in the name cell, never in the actions column', async ({ page, rest }) => {
    const name = uniqueName('gone');
    const token = await cliToken(name);
    const id = uniqueId();
    await rest.mustCreatePlant(token, { id, name: 'Soon gone', tag: 'a' });
    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, token, name);
    await plantRow(page, id).getByRole('button', { name: /^Edit plant/ }).click();
    const input = page.getByRole('textbox', { name: 'Name', exact: true });
    await input.fill('Renamed too late');
    expect((await rest.deletePlant(token, id)).status).toBe(204);
    await input.press('Enter');
    const row = plantRow(page, id);
    const refusal = row.getByRole('alert');
    await expect(refusal).toHaveText(`Not saved: plant ${id} was deleted elsewhere. Cancel (Escape) to close the row.`);
    await expect(row.locator('td.cell-actions .field__error')).toHaveCount(0);
    // The actions keep their one line: the row is as tall as the name cell's field and message.
    const actions = await row.locator('td.cell-actions .row-actions').boundingBox();
    expect(actions!.height).toBeLessThan(40);
    await expect(input).toHaveValue('Renamed too late');
    await input.press('Escape');
    await expect(row.getByRole('alert')).toHaveCount(0);
  });

  test('Undo is one key away wherever the cursor is (Ctrl+Z), and its notice stays while the keyboard is on it', async ({ page, rest }) => {
    const name = uniqueName('undoer');
    const token = await cliToken(name);
    const base = uniqueId();
    for (const index of [0n, 1n]) await rest.mustCreatePlant(token, { id: base + index, name: `Undo ${index}` });
    await signIn(page, token, name);
    await expect(range(page)).toHaveText('1–2 of 2');
    // By keyboard: the row's delete button, the dialog's confirm.
    await plantRow(page, base).locator('[data-grid-target="name"]').focus();
    await page.keyboard.press('End');
    await expect(page.locator(':focus')).toHaveAttribute('data-grid-target', 'delete');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete plant' }).press('Enter');
    await expect(plantRow(page, base)).toHaveCount(0);
    const notice = page.locator('.toast').filter({ hasText: 'Deleted plant' });
    await expect(notice.getByRole('button', { name: 'Undo' })).toHaveAttribute('aria-keyshortcuts', 'Control+Z Meta+Z');
    // No Tab through the page: the key does it from where the cursor is.
    await page.keyboard.press('Control+z');
    await expect(page.locator('.toast').filter({ hasText: /^Put back plant “Undo 0”/ })).toBeVisible();
    await expect(plantRow(page, base)).toBeVisible();

    // A notice the keyboard is in stays past its 8 s, though the pointer came and went.
    await plantRow(page, base + 1n).getByRole('button', { name: /^Delete plant/ }).click();
    await dialog.getByRole('button', { name: 'Delete plant' }).click();
    const second = page.locator('.toast').filter({ hasText: 'Deleted plant “Undo 1”' });
    await second.hover();
    await second.getByRole('button', { name: 'Undo' }).focus();
    await page.mouse.move(0, 0);
    await page.waitForTimeout(9_000);
    await expect(second).toBeVisible();
    await expect(second.getByRole('button', { name: 'Undo' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(plantRow(page, base + 1n)).toBeVisible();
  });

  test('deleting the only plant of the last page shows the page before it, not an empty page', async ({ page, rest }) => {
    const name = uniqueName('lastpage');
    const token = await cliToken(name);
    const base = uniqueId();
    for (let index = 0n; index < 11n; index++) await rest.mustCreatePlant(token, { id: base + index, name: `P${index}` });
    await signIn(page, token, name);
    await page.getByLabel('Plants per page').selectOption('10');
    await page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button', { name: 'Next page' }).click();
    await expect(range(page)).toHaveText('11–11 of 11');
    await plantRow(page, base + 10n).getByRole('button', { name: /^Delete plant/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    await expect(range(page)).toHaveText('1–10 of 10');
    await expect(page.locator('tr[data-plant-id]')).toHaveCount(10);
  });

  test('a right-to-left override in a name reverses nothing around it, in the table and the dialog', async ({ page, rest, shot }) => {
    const name = uniqueName('bidi');
    const token = await cliToken(name);
    const id = 507n + uniqueId();
    await rest.mustCreatePlant(token, { id, name: 'Fern\u202e', tag: 'x\u202e' });
    await signIn(page, token, name);
    const row = plantRow(page, id);
    await expect(row.locator('td.name bdi')).toHaveText('Fern\u202e');
    await row.getByRole('button', { name: /^Delete plant/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this plant?' });
    // The name is isolated in a <bdi>, so the text after it keeps its order on screen.
    await expect(dialog.locator('bdi')).toHaveText('Fern\u202e');
    const order = await dialog.locator('p').evaluate((element) => {
      const bdi = element.querySelector('bdi')!;
      const after = document.createRange();
      after.setStartAfter(bdi);
      after.setEnd(element, element.childNodes.length);
      const rects = [...after.getClientRects()].filter((rect) => rect.width > 0);
      // Left to right: the "(id …" text starts to the right of the name.
      return { isolate: getComputedStyle(bdi).unicodeBidi, nameRight: bdi.getBoundingClientRect().right, textLeft: rects[0]?.left ?? 0 };
    });
    expect(order.isolate).toBe('isolate');
    expect(order.textLeft).toBeGreaterThanOrEqual(order.nameRight - 1);
    await expect(dialog).toContainText(`(id ${id}) will be removed from the store. You can undo it for a few minutes.`);
    await shot(page, '12-bidi-dialog');
    await page.keyboard.press('Escape');
  });

  test('a slow page shows the progress indicator; a failing one says so and can be retried', async ({ page }) => {
    const name = uniqueName('slow');
    const token = await cliToken(name);
    await delay(page, 'plants.page', 1500);
    await signIn(page, token, name);
    await expect(page.getByRole('progressbar', { name: 'Loading' })).toBeVisible();
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await page.unroute('**/api/trpc/**');

    await page.route('**/api/trpc/**', (route) =>
      new URL(route.request().url()).pathname.includes('plants.page') ? route.abort('connectionrefused') : route.continue(),
    );
    await page.getByLabel('Search names').fill('nothing');
    await page.getByLabel('Search names').press('Enter');
    await expect(page.getByRole('main').getByRole('alert')).toContainText('The plants could not be loaded: the server could not be reached', { timeout: 15_000 });
    await page.unroute('**/api/trpc/**');
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect(page.getByText('No plants match these filters.')).toBeVisible();
  });

  test('two members in two browsers never see each other’s plants; the admin sees both, with owners', async ({ browser, baseURL, adminToken, shot }) => {
    const [nameA, nameB] = [uniqueName('alice'), uniqueName('bob')];
    const [tokenA, tokenB] = await Promise.all([cliToken(nameA), cliToken(nameB)]);
    const [contextA, contextB, contextAdmin] = await Promise.all([browser.newContext({ baseURL }), browser.newContext({ baseURL }), browser.newContext({ baseURL })]);
    const [pageA, pageB, pageAdmin] = await Promise.all([contextA.newPage(), contextB.newPage(), contextAdmin.newPage()]);
    await signIn(pageA, tokenA, nameA);
    await signIn(pageB, tokenB, nameB);
    const idA = uniqueId();
    const idB = idA + 1n;
    await addPlant(pageA, { id: idA, name: 'Alice’s aloe', tag: 'succulent' });
    await addPlant(pageB, { id: idB, name: 'Bob’s begonia' });
    await expect(plantRow(pageA, idA)).toBeVisible();
    await expect(plantRow(pageB, idB)).toBeVisible();
    await Promise.all([pageA.reload(), pageB.reload()]);
    await expect.poll(() => shownIds(pageA)).toEqual([idA.toString()]);
    await expect.poll(() => shownIds(pageB)).toEqual([idB.toString()]);
    await shot(pageA, '13-member-a');

    await signIn(pageAdmin, adminToken, 'admin', `/plants?owner=${nameA}`);
    await expect.poll(() => shownIds(pageAdmin)).toEqual([idA.toString()]);
    await expect(plantRow(pageAdmin, idA).locator('td.owner')).toHaveText(nameA);
    await expect(plantRow(pageAdmin, idA).locator('td.created time')).toBeVisible();
    await expect(pageAdmin.getByRole('combobox', { name: 'Owner' })).toHaveValue(nameA);
    await pageAdmin.getByRole('combobox', { name: 'Owner' }).selectOption(nameB);
    await expect.poll(() => shownIds(pageAdmin)).toEqual([idB.toString()]);
    await shot(pageAdmin, '14-admin-owner-filter');
    await Promise.all([contextA.close(), contextB.close(), contextAdmin.close()]);
  });
});
