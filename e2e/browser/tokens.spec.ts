import { expect, test, signIn, uniqueName } from './fixtures';

test.describe('API tokens (admins)', () => {
  test('an admin creates a token in the page that works over REST, then revokes it and REST answers 401', async ({ page, context, adminToken, baseURL, shot }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, adminToken, 'admin');
    const tokensSection = page.getByRole('region', { name: 'API tokens' }).or(page.locator('section.tokens'));
    await expect(page.getByRole('heading', { name: 'API tokens' })).toBeVisible();

    const name = uniqueName('ui-made');
    await page.getByLabel('User name').fill(name);
    await page.getByLabel('Role').selectOption('member');
    await page.getByRole('button', { name: 'Create token' }).click();

    const issued = page.getByRole('region', { name: `New token for ${name} (member)` });
    await expect(issued).toBeVisible();
    await expect(issued).toContainText('it is shown only this once');
    const tokenBox = issued.getByLabel('The new token');
    await expect(tokenBox).toBeFocused();
    const token = await tokenBox.inputValue();
    expect(token).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);
    await issued.getByRole('button', { name: 'Copy' }).click();
    await expect(issued.getByRole('status')).toHaveText('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await shot(page, '13-token-created');

    // The list shows it by its prefix, never whole.
    const row = page.locator('tr', { hasText: name });
    await expect(row).toContainText(`${token.slice(0, 10)}…`);
    await expect(row).toContainText('active');
    await expect(tokensSection.getByText(token)).toHaveCount(0);

    // It works on the REST door.
    const before = await fetch(`${baseURL}/api/plants`, { headers: { authorization: `Bearer ${token}` } });
    expect(before.status).toBe(200);
    expect(await before.json()).toEqual([]);

    await issued.getByRole('button', { name: 'Done' }).click();
    await expect(issued).toHaveCount(0);
    await expect(page.getByLabel('User name')).toBeFocused();

    await row.getByRole('button', { name: /^Revoke token \d+/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
    await expect(dialog).toContainText(name);
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await expect(row).toContainText('revoked');
    await expect(row.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
    await expect(page.getByRole('heading', { name: 'API tokens' })).toBeFocused();
    await shot(page, '14-token-revoked');

    const after = await fetch(`${baseURL}/api/plants`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('Bearer');
  });

  test('user names are checked before sending, and the server’s refusals are shown by the field', async ({ page, adminToken }) => {
    await signIn(page, adminToken, 'admin');
    const userName = page.getByLabel('User name');
    const create = page.getByRole('button', { name: 'Create token' });
    await create.click();
    await expect(page.locator('#token-user-error')).toHaveText('User name must not be empty.');
    await expect(userName).toBeFocused();
    await userName.fill('no spaces please');
    await create.click();
    await expect(page.locator('#token-user-error')).toHaveText('User name may hold letters, digits and . _ @ - only.');
    await expect(page.getByRole('region', { name: /New token for/ })).toHaveCount(0);
  });
});
