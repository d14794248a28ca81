import { cliToken, expect, plantRow, shownIds, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';

test.describe('live, sessions and the address', () => {
  test('what REST clients change shows within a second: a changed or deleted row is marked where it is, a new plant is placed', async ({ page, rest, baseURL }) => {
    const name = uniqueName('live');
    const token = await cliToken(name);
    const base = uniqueId();
    for (const index of [0n, 1n, 2n]) await rest.mustCreatePlant(token, { id: base + index, name: `Live ${index}`, tag: 'a' });
    await signIn(page, token, name, '/plants?sort=name');
    await expect.poll(() => shownIds(page)).toEqual([base, base + 1n, base + 2n].map(String));
    // The feed is live once the server's stream said so.
    await expect(page.getByTestId('live')).toHaveAttribute('data-state', 'on');

    const sentAt = Date.now();
    await rest.mustCreatePlant(token, { id: base + 9n, name: 'Live 9, made by a program' });
    // The page has room for it: it belongs on this page.
    await expect(page.getByTestId('live-news')).toHaveText('1 new plant belongs here.');
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    // Renamed to sort last: it is marked in place, not moved.
    const renamed = await fetch(`${baseURL}/api/plants/${base}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ name: 'Zz renamed elsewhere' }),
    });
    expect(renamed.status).toBe(200);
    await expect(plantRow(page, base).locator('td.name')).toContainText('Zz renamed elsewhere');
    await expect(plantRow(page, base).locator('.live-mark')).toHaveText('changed elsewhere');
    expect(await shownIds(page)).toEqual([base, base + 1n, base + 2n].map(String));
    expect((await rest.deletePlant(token, base + 1n)).status).toBe(204);
    await expect(plantRow(page, base + 1n).locator('.live-mark')).toHaveText('deleted elsewhere');
    await expect(plantRow(page, base + 1n).getByRole('button', { name: /^Delete plant/ })).toHaveAttribute('aria-disabled', 'true');
    // Refresh takes it all in.
    await page.locator('.live-line').getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => shownIds(page)).toEqual([base + 2n, base + 9n, base].map(String));
    await expect(page.locator('.live-mark')).toHaveCount(0);
  });

  test('a new tab of the same browser opens signed in; signing out there signs out every tab', async ({ page, adminToken, baseURL }) => {
    await signIn(page, adminToken, 'admin');
    // A middle-clicked link opens a tab with an empty sessionStorage: the open tab hands its session over.
    const tab = await page.context().newPage();
    await tab.goto('/webhooks');
    await expect(tab.getByTestId('signed-in-as')).toContainText('admin');
    await expect(tab.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
    await expect(tab.getByLabel('API token')).toHaveCount(0);
    await tab.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByLabel('API token')).toBeVisible();
    await expect(page.getByText('You signed out in another tab.')).toBeVisible();
    // Another browser (context) was never signed in: nothing is handed across.
    const other = await page.context().browser()!.newContext({ baseURL });
    const stranger = await other.newPage();
    await stranger.goto('/plants');
    await expect(stranger.getByLabel('API token')).toBeVisible();
    await other.close();
    await tab.close();
  });

  test('what the view cannot show leaves the address: ?size=33, a 300-character q, an unknown sort', async ({ page }) => {
    const name = uniqueName('address');
    const token = await cliToken(name);
    await signIn(page, token, name, `/plants?size=33&q=${'x'.repeat(300)}&sort=colour&tag=fern`);
    await expect(page).toHaveURL(/\/plants\?tag=fern$/);
    await expect(page.getByText('No plants match these filters.')).toBeVisible();
  });
});
