import { errorCatalog } from '@/shared/errors';
import { cliTokenWithId, cliRevoke, expect, signIn, test, uniqueName } from '@test-support/browser-fixtures';

test.describe('API tokens (admins)', () => {
  test('an admin creates a token that works over REST; revoking it closes its one-time panel and REST answers 401', async ({ page, context, adminToken, baseURL, shot }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, adminToken, 'admin', '/tokens');
    await expect(page.getByRole('heading', { name: 'API tokens', level: 1 })).toBeVisible();

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
    await shot(page, '15-token-created');

    const row = page.locator('tr', { hasText: name });
    await expect(row).toContainText(`${token.slice(0, 10)}…`);
    await expect(row).toContainText('active');
    await expect(page.getByText(token, { exact: true })).toHaveCount(0);
    const before = await fetch(`${baseURL}/api/plants`, { headers: { authorization: `Bearer ${token}` } });
    expect(before.status).toBe(200);

    // Revoked while its panel is still open: the panel goes, it must not offer a dead token.
    await row.getByRole('button', { name: /^Revoke token \d+/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
    await expect(dialog).toContainText(name);
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await expect(row).toContainText('revoked');
    await expect(issued).toHaveCount(0);
    await expect(row.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
    await expect(page.getByRole('heading', { name: 'API tokens', level: 1 })).toBeFocused();
    await shot(page, '16-token-revoked');

    const after = await fetch(`${baseURL}/api/plants`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
  });

  test('the last working admin token is not offered for revoking, and the page says why; the server refuses it too', async ({ page, adminToken, baseURL, shot }) => {
    await signIn(page, adminToken, 'admin', '/tokens');
    const explained = page.getByTestId('last-admin-explained');
    await expect(explained).toContainText('is the last working admin token, so it cannot be revoked');
    const adminRow = page.locator('tr[data-token-id]').filter({ has: page.getByTestId('last-admin-note') });
    await expect(adminRow).toHaveCount(1);
    await expect(adminRow.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
    await expect(adminRow).toContainText('(this session)');
    await shot(page, '17-last-admin-explained');
    const id = Number(await adminRow.getAttribute('data-token-id'));

    // The server's own refusal, whatever a page shows.
    const refused = await fetch(`${baseURL}/api/trpc/tokens.revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ json: { id } }),
    });
    expect(refused.status).toBe(errorCatalog.lastAdmin.status);
    const body = (await refused.json()) as { error: { json: { message: string; data: { error: number } } } };
    expect(body.error.json.data.error).toBe(errorCatalog.lastAdmin.value);

    // With a second admin token, both may be revoked, and the note goes; revoking that one brings it back.
    const second = await cliTokenWithId(uniqueName('second-admin'), 'admin');
    await page.reload();
    await expect(explained).toHaveCount(0);
    await expect(page.getByTestId('last-admin-note')).toHaveCount(0);
    await cliRevoke(second.id);
    await page.reload();
    await expect(explained).toBeVisible();
  });

  test('a token made to expire in 7 days says until when; its user made an admin, then a member again, on every door', async ({ page, adminToken, baseURL, shot }) => {
    await signIn(page, adminToken, 'admin', '/tokens');
    const name = uniqueName('expiring');
    await page.getByLabel('User name').fill(name);
    const expiry = page.getByLabel('Expires after (days)');
    await expiry.fill('0');
    await page.getByRole('button', { name: 'Create token' }).click();
    await expect(page.locator('#token-expiry-error')).toHaveText('Expiry is at least 1 day.');
    await expect(expiry).toBeFocused();
    await expiry.fill('7');
    await page.getByRole('button', { name: 'Create token' }).click();
    const issued = page.getByRole('region', { name: `New token for ${name} (member)` });
    await expect(issued).toContainText('It works until');
    const token = await issued.getByLabel('The new token').inputValue();
    const row = page.locator('tr[data-token-id]', { hasText: name });
    const expires = await row.locator('td[data-label="Expires"] time').getAttribute('datetime');
    const days = (Date.parse(expires!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.01);

    // Webhooks are for admins: the door says so before and after each change.
    const webhooks = async () => (await fetch(`${baseURL}/api/webhooks/endpoints`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await webhooks()).toBe(403);
    await row.getByRole('button', { name: new RegExp(`^Make an admin: ${name}`) }).click();
    const promote = page.getByRole('dialog', { name: `Make ${name} an admin?` });
    await expect(promote).toContainText('every token of');
    await shot(page, 'token-role-change');
    await promote.getByRole('button', { name: 'Make an admin' }).click();
    await expect(page.getByRole('status').filter({ hasText: `${name} is an admin now` })).toBeVisible();
    await expect(row.locator('.badge--admin')).toBeVisible();
    expect(await webhooks()).toBe(200);
    await row.getByRole('button', { name: new RegExp(`^Make a member: ${name}`) }).click();
    await page.getByRole('dialog', { name: `Make ${name} a member?` }).getByRole('button', { name: 'Make a member' }).click();
    await expect(page.getByRole('status').filter({ hasText: `${name} is a member now` })).toBeVisible();
    await expect(row.locator('.badge--member')).toBeVisible();
    expect(await webhooks()).toBe(403);
  });

  test('user names are checked before sending', async ({ page, adminToken }) => {
    await signIn(page, adminToken, 'admin', '/tokens');
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
