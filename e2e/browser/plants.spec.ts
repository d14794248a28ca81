import type { Page } from '@playwright/test';

import { addPlant, cliToken, expect, plantForm, plantRow, signIn, test, uniqueId, uniqueName } from './fixtures';

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** The ids of the table's rows, top to bottom, as text. */
async function shownIds(page: Page): Promise<string[]> {
  return page.locator('tr[data-plant-id]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-plant-id') ?? ''));
}

/** Holds every tRPC call of one procedure for `ms`, so what the page shows meanwhile can be checked. */
async function delay(page: Page, procedure: string, ms: number): Promise<void> {
  await page.route(`**/api/trpc/**`, async (route) => {
    if (new URL(route.request().url()).pathname.includes(procedure)) await new Promise((resolve) => setTimeout(resolve, ms));
    await route.continue();
  });
}

test.describe('plants', () => {
  test('create, with and without a tag; the empty state first', async ({ page, rest, shot }) => {
    const name = uniqueName('creator');
    const token = await cliToken(name);
    await signIn(page, token, name);
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await page.getByRole('button', { name: 'Add a plant' }).click();
    const form = plantForm(page);
    await expect(form.id).toBeFocused();

    const tagged = uniqueId();
    await addPlant(page, { id: tagged, name: 'Monstera deliciosa', tag: 'tropical' });
    await expect(page.getByRole('status').filter({ hasText: `Added plant “Monstera deliciosa” with id ${tagged}, tag “tropical”.` })).toBeVisible();
    await expect(plantRow(page, tagged)).toContainText('Monstera deliciosa');
    await expect(plantRow(page, tagged).locator('td.tag')).toHaveText('tropical');
    // Ready for the next one: the form is empty and the cursor is back in the id field.
    await expect(form.id).toBeFocused();
    await expect(form.id).toHaveValue('');
    await expect(form.name).toHaveValue('');

    const untagged = tagged + 1n;
    await addPlant(page, { id: untagged, name: 'Ficus lyrata' });
    await expect(plantRow(page, untagged).locator('td.tag')).toHaveText('—');
    await shot(page, '05-plants-created');

    const listed = await rest.listPlantsText(token);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.text)).toEqual([
      { id: Number(tagged), name: 'Monstera deliciosa', tag: 'tropical' },
      { id: Number(untagged), name: 'Ficus lyrata' },
    ]);
    expect(listed.text).toContain(`"id":${tagged}`);
  });

  test('field validation: the router schema’s messages, next to each field, before any request', async ({ page, shot }) => {
    const name = uniqueName('validator');
    await signIn(page, await cliToken(name), name);
    const form = plantForm(page);
    let creates = 0;
    page.on('request', (request) => {
      if (request.url().includes('plants.create')) creates += 1;
    });

    const errorOf = (field: 'plant-id' | 'plant-name' | 'plant-tag') => page.locator(`#${field}-error`);

    // Nothing filled in: every required field says so, and the cursor goes to the first.
    await form.submit.click();
    await expect(errorOf('plant-id')).toHaveText(/id is required/i);
    await expect(errorOf('plant-name')).toHaveText(/name must not be empty/i);
    await expect(errorOf('plant-tag')).toHaveCount(0);
    await expect(form.id).toBeFocused();
    await expect(form.id).toHaveAttribute('aria-invalid', 'true');

    const cases: [string, string, string, 'plant-id' | 'plant-name' | 'plant-tag', RegExp][] = [
      ['12abc', 'Fern', '', 'plant-id', /id must be an integer/i],
      ['1.5', 'Fern', '', 'plant-id', /id must be an integer/i],
      ['9223372036854775808', 'Fern', '', 'plant-id', /id must be at most 9223372036854775807/i],
      ['-9223372036854775809', 'Fern', '', 'plant-id', /id must be at least -9223372036854775808/i],
      ['1', '   ', '', 'plant-name', /name must not be only white space/i],
      ['1', 'x'.repeat(201), '', 'plant-name', /name must be at most 200 characters/i],
      ['1', 'bell\u0007', '', 'plant-name', /name must not contain control characters/i],
      ['1', 'Fern', 't'.repeat(101), 'plant-tag', /tag must be at most 100 characters/i],
    ];
    for (const [id, plantName, tag, field, message] of cases) {
      await form.id.fill(id);
      await form.name.fill(plantName);
      await form.tag.fill(tag);
      await form.submit.click();
      await expect(errorOf(field)).toHaveText(message);
      await expect(page.locator(`#${field}`)).toBeFocused();
    }
    // 200 characters are fine: the limit is the schema's, not an input's maxlength.
    await form.name.fill('x'.repeat(200));
    await form.name.blur();
    await expect(errorOf('plant-name')).toHaveCount(0);

    // A message also shows when leaving a field, before any submit.
    await page.reload();
    await form.tag.fill('t'.repeat(101));
    await form.tag.press('Tab');
    await expect(errorOf('plant-tag')).toHaveText(/tag must be at most 100 characters/i);
    await shot(page, '06-field-validation');
    expect(creates).toBe(0);
  });

  test('a duplicate id is refused by the server, and said next to the id field', async ({ page, rest, adminToken, shot }) => {
    const id = uniqueId();
    // Someone else's plant: ids are unique across the whole store.
    await rest.mustCreatePlant(adminToken, { id, name: 'Taken by admin' });
    const name = uniqueName('dup');
    await signIn(page, await cliToken(name), name);
    const form = plantForm(page);
    await addPlant(page, { id, name: 'Mine' });
    await expect(page.locator('#plant-id-error')).toHaveText(`A plant with id ${id} already exists.`);
    await expect(form.id).toBeFocused();
    await expect(form.id).toHaveAttribute('aria-invalid', 'true');
    // What was typed stays, to be corrected.
    await expect(form.name).toHaveValue('Mine');
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await shot(page, '07-duplicate-id');

    await form.id.fill((id + 1n).toString());
    await form.submit.click();
    await expect(plantRow(page, id + 1n)).toBeVisible();
    await expect(page.locator('#plant-id-error')).toHaveCount(0);
  });

  test('int64 ids round-trip exactly: 9223372036854775807, -9223372036854775808, 9007199254740993', async ({ page, rest, adminToken }) => {
    const ids = [INT64_MAX, INT64_MIN, 9007199254740993n];
    // Ids are store-wide; a rerun on the same database starts clean.
    for (const id of ids) await rest.deletePlant(adminToken, id);
    const name = uniqueName('int64');
    const token = await cliToken(name);
    await signIn(page, token, name);
    for (const id of ids) {
      await addPlant(page, { id, name: `Plant ${id}` });
      await expect(plantRow(page, id)).toBeVisible();
    }
    await page.reload();
    await expect(page.getByTestId('signed-in-as')).toContainText(name);
    await expect(page.locator('tr[data-plant-id] td.id')).toHaveText([INT64_MIN.toString(), '9007199254740993', INT64_MAX.toString()]);

    // The REST door sees the same digits: the JSON numbers are exact.
    const listed = await rest.listPlantsText(token);
    expect(listed.text).toBe(
      `[{"id":-9223372036854775808,"name":"Plant -9223372036854775808"},{"id":9007199254740993,"name":"Plant 9007199254740993"},{"id":9223372036854775807,"name":"Plant 9223372036854775807"}]`,
    );

    // And deleting the largest one deletes exactly that one.
    await plantRow(page, INT64_MAX).getByRole('button', { name: /Delete/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    await expect(plantRow(page, INT64_MAX)).toHaveCount(0);
    await expect.poll(async () => (await rest.listPlantsText(token)).text).not.toContain('9223372036854775807');
    expect((await rest.listPlantsText(token)).text).toContain('9007199254740993');
  });

  test('paging follows the REST `after` cursor, with a page-size choice', async ({ page, rest, shot, baseURL }) => {
    const name = uniqueName('pager');
    const token = await cliToken(name);
    const base = uniqueId();
    const ids = Array.from({ length: 23 }, (_, index) => base + BigInt(index) * 7n);
    // Created out of order: the table orders by id.
    for (const id of [...ids].reverse()) await rest.mustCreatePlant(token, { id, name: `Plant ${id}`, tag: `t${id % 5n}` });

    await signIn(page, token, name);
    const pager = page.getByRole('navigation', { name: 'Plant pages' });
    const next = pager.getByRole('button', { name: 'Next' });
    const previous = pager.getByRole('button', { name: 'Previous' });
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(0, 10).map(String));
    await expect(previous).toHaveAttribute('aria-disabled', 'true');
    await expect(page.locator('caption#plants-caption')).toHaveText('Page 1: plants 1–10, by id');
    await shot(page, '08-paging-page-1');

    // The REST door's first page and its Link header name the same next page.
    const firstPage = await fetch(`${baseURL}/api/plants?limit=10`, { headers: { authorization: `Bearer ${token}` } });
    expect(firstPage.headers.get('link')).toContain(`after=${ids[9]}`);
    const secondRest = await rest.listPlantsText(token, `?limit=10&after=${ids[9]}`);

    await next.click();
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(10, 20).map(String));
    expect((JSON.parse(secondRest.text) as { id: number }[]).length).toBe(10);
    expect(secondRest.text).toContain(`"id":${ids[10]}`);
    expect(secondRest.text).toContain(`"id":${ids[19]}`);
    await expect(pager).toContainText('Page 2');
    await expect(next).toBeFocused();

    await next.click();
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(20).map(String));
    await expect(next).toHaveAttribute('aria-disabled', 'true');
    await next.click({ force: true }); // aria-disabled: does nothing on the last page
    await expect(pager).toContainText('Page 3');

    await previous.click();
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(10, 20).map(String));

    await page.getByLabel('Plants per page').selectOption('25');
    await expect.poll(() => shownIds(page)).toEqual(ids.map(String));
    await expect(pager).toHaveCount(0);

    await page.getByLabel('Plants per page').selectOption('10');
    await expect.poll(() => shownIds(page)).toEqual(ids.slice(0, 10).map(String));
  });

  test('delete asks first, removes the row at once, and moves focus on', async ({ page, rest, shot }) => {
    const name = uniqueName('deleter');
    const token = await cliToken(name);
    const base = uniqueId();
    const ids = [base, base + 1n, base + 2n];
    for (const id of ids) await rest.mustCreatePlant(token, { id, name: `Plant ${id}` });
    await signIn(page, token, name);
    await expect.poll(() => shownIds(page)).toEqual(ids.map(String));

    const deleteButton = plantRow(page, ids[1]!).getByRole('button', { name: `Delete plant Plant ${ids[1]} (id ${ids[1]})` });
    await deleteButton.click();
    const dialog = page.getByRole('dialog', { name: 'Delete this plant?' });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText(`“Plant ${ids[1]}” (id ${ids[1]}) will be removed`);
    await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
    await shot(page, '09-delete-confirm');
    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await expect(plantRow(page, ids[1]!)).toBeVisible();
    await expect(deleteButton).toBeFocused();

    // The server is slowed down: the row must leave before it answers, with the progress indicator on.
    await delay(page, 'plants.delete', 1500);
    await deleteButton.click();
    await dialog.getByRole('button', { name: 'Delete plant' }).click();
    await expect(plantRow(page, ids[1]!)).toHaveCount(0, { timeout: 1000 });
    await expect(page.getByRole('progressbar', { name: 'Loading' })).toBeVisible();
    await expect(plantRow(page, ids[2]!).getByRole('button', { name: /Delete/ })).toBeFocused();
    await expect(page.getByRole('progressbar', { name: 'Loading' })).toHaveCount(0);
    await expect(page.getByRole('main').getByRole('alert')).toHaveCount(0);
    await expect(plantRow(page, ids[1]!)).toHaveCount(0);
    expect((await rest.listPlantsText(token)).text).not.toContain(`${ids[1]}`);
  });

  test('a delete the server refuses rolls back: the row comes back, with the reason', async ({ page, rest, shot }) => {
    const name = uniqueName('rollback');
    const token = await cliToken(name);
    const base = uniqueId();
    const ids = [base, base + 1n, base + 2n];
    for (const id of ids) await rest.mustCreatePlant(token, { id, name: `Plant ${id}` });
    await signIn(page, token, name);
    await expect.poll(() => shownIds(page)).toEqual(ids.map(String));

    // Another session removes the middle plant behind the page's back.
    expect((await rest.deletePlant(token, ids[1]!)).status).toBe(204);

    await delay(page, 'plants.delete', 1000);
    await plantRow(page, ids[1]!).getByRole('button', { name: /Delete/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    // Gone at once (optimistic) …
    await expect(plantRow(page, ids[1]!)).toHaveCount(0, { timeout: 900 });
    // … back when the server says 404, in its place, with the reason.
    const alert = page.getByRole('main').getByRole('alert');
    await expect(alert).toContainText(`The plant “Plant ${ids[1]}” with id ${ids[1]} was not deleted: no plant with id ${ids[1]}.`);
    await expect(plantRow(page, ids[1]!)).toBeVisible();
    await expect(plantRow(page, ids[1]!)).toHaveClass(/row--failed/);
    expect(await shownIds(page)).toEqual(ids.map(String));
    await shot(page, '10-delete-rolled-back');

    await alert.getByRole('button', { name: 'Reload the list' }).click();
    await expect.poll(() => shownIds(page)).toEqual([ids[0], ids[2]].map(String));
    await expect(page.getByRole('main').getByRole('alert')).toHaveCount(0);
  });

  test('a slow list shows the loading state and the progress indicator', async ({ page }) => {
    const name = uniqueName('slow');
    const token = await cliToken(name);
    await delay(page, 'plants.list', 1500);
    await signIn(page, token, name);
    await expect(page.getByRole('status').filter({ hasText: 'Loading plants…' })).toBeVisible();
    await expect(page.getByRole('progressbar', { name: 'Loading' })).toBeVisible();
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await expect(page.getByRole('progressbar', { name: 'Loading' })).toHaveCount(0);
  });

  test('a failing list shows an error state with a way to try again', async ({ page }) => {
    const name = uniqueName('failing');
    await signIn(page, await cliToken(name), name);
    await page.route('**/api/trpc/**', (route) =>
      new URL(route.request().url()).pathname.includes('plants.list') ? route.abort('connectionrefused') : route.continue(),
    );
    await page.getByLabel('Plants per page').selectOption('25');
    await expect(page.getByRole('main').getByRole('alert')).toContainText('The plants could not be loaded: the server could not be reached', { timeout: 15_000 });
    await page.unroute('**/api/trpc/**');
    await page.getByRole('button', { name: 'Try again' }).click();
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
  });

  test('two members in two browsers never see each other’s plants', async ({ browser, baseURL, rest, adminToken, shot }) => {
    const [nameA, nameB] = [uniqueName('alice'), uniqueName('bob')];
    const tokenA = await cliToken(nameA);
    const tokenB = await cliToken(nameB);
    const [contextA, contextB] = await Promise.all([browser.newContext({ baseURL }), browser.newContext({ baseURL })]);
    const [pageA, pageB] = await Promise.all([contextA.newPage(), contextB.newPage()]);
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
    await expect(pageA.getByText('Bob’s begonia')).toHaveCount(0);
    await expect(pageB.getByText('Alice’s aloe')).toHaveCount(0);
    await shot(pageA, '11-member-a');
    await shot(pageB, '12-member-b');

    // Bob cannot reach Alice's plant through the API either; the admin sees both.
    expect((await rest.deletePlant(tokenB, idA)).status).toBe(404);
    const all = await rest.listPlantsText(adminToken, `?after=${idA - 1n}&limit=2`);
    expect(all.text).toContain(`"id":${idA}`);
    expect(all.text).toContain(`"id":${idB}`);
    await Promise.all([contextA.close(), contextB.close()]);
  });
});
