import { cliRevoke, cliToken, cliTokenWithId, expect, signIn, test, uniqueName } from '@test-support/browser-fixtures';

test.describe('signing in', () => {
  test('the admin signs in with the bootstrap token, stays signed in for the tab, and signs out', async ({ page, adminToken, shot, browser, baseURL }) => {
    await page.goto('/');
    const tokenInput = page.getByLabel('API token');
    await expect(tokenInput).toBeVisible();
    await expect(tokenInput).toHaveAttribute('type', 'password');
    await shot(page, '01-signed-out');

    await tokenInput.fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const who = page.getByTestId('signed-in-as');
    // The name once, the role as a label: not "admin admin".
    await expect(who).toHaveText(/^A\s*Signed in as admin\s*Admin$/);
    await expect(page).toHaveURL(/\/plants$/);
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeFocused();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await expect(nav.getByRole('link', { name: 'Plants' })).toHaveAttribute('aria-current', 'page');
    await nav.getByRole('link', { name: 'API tokens' }).click();
    await expect(page).toHaveURL(/\/tokens$/);
    await expect(page.getByRole('heading', { name: 'API tokens', level: 1 })).toBeVisible();
    await page.goBack();
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeVisible();
    await shot(page, '02-signed-in-admin');

    // Kept for the browser session only: sessionStorage, no cookie, nothing in localStorage.
    const storage = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: [adminToken], local: 0, cookie: '' });

    await page.reload();
    await expect(who).toContainText('admin');

    // Another browser session does not share it.
    const other = await browser.newContext({ baseURL });
    const otherPage = await other.newPage();
    await otherPage.goto('/');
    await expect(otherPage.getByLabel('API token')).toBeVisible();
    await expect(otherPage.getByTestId('signed-in-as')).toHaveCount(0);
    await other.close();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'You have signed out.' })).toBeVisible();
    await expect(tokenInput).toBeFocused();
    await expect(who).toHaveCount(0);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    await expect(tokenInput).toBeVisible();
  });

  test('a bad token gets a clear message, not a blank page', async ({ page, shot }) => {
    await page.goto('/');
    const tokenInput = page.getByLabel('API token');
    const signInButton = page.getByRole('button', { name: 'Sign in' });

    await signInButton.click();
    await expect(page.getByText('Enter your API token.')).toBeVisible();
    await expect(tokenInput).toHaveAttribute('aria-invalid', 'true');

    for (const bad of ['not-a-token', `pst_${'A'.repeat(43)}`]) {
      await tokenInput.fill(bad);
      await signInButton.click();
      await expect(page.getByText('That token was not accepted: it is unknown, revoked or expired.')).toBeVisible();
      await expect(tokenInput).toBeFocused();
      await expect(page.getByTestId('signed-in-as')).toHaveCount(0);
    }
    // The message is tied to the field for screen readers.
    const describedBy = await tokenInput.getAttribute('aria-describedby');
    expect(describedBy).toBeTruthy();
    await expect(page.locator(`#${describedBy}`)).toContainText('not accepted');
    await shot(page, '03-bad-token');
  });

  test('a revoked token: the open page ends its session, and it cannot sign in again', async ({ page }) => {
    const name = uniqueName('revoked');
    const { token, id } = await cliTokenWithId(name, 'member');
    await signIn(page, token, name);
    await cliRevoke(id);

    // The next request after the revoke takes effect is refused: the page says so and shows the sign-in form.
    // The token command is another process, so the server honours its revoke once its cached acceptance of
    // the token lapses (AUTH_CACHE_TTL_MS, 5 s by default): reload until then.
    const sessionEnded = page.getByText('Your session has ended: the token was revoked or has expired.', { exact: false });
    await expect(async () => {
      if (!(await sessionEnded.isVisible())) {
        await page.getByLabel('Search names').fill(`x${Date.now()}`, { timeout: 1_000 });
        await page.getByLabel('Search names').press('Enter', { timeout: 1_000 });
      }
      await expect(sessionEnded).toBeVisible({ timeout: 1_000 });
    }).toPass({ timeout: 10_000 });
    await expect(page.getByTestId('signed-in-as')).toHaveCount(0);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('That token was not accepted: it is unknown, revoked or expired.')).toBeVisible();
  });

  test('a member sees plants but never the tokens section, which the router refuses them', async ({ page, baseURL, shot }) => {
    const name = uniqueName('member');
    const token = await cliToken(name, 'member');
    await signIn(page, token, name);
    await expect(page.getByTestId('signed-in-as')).toContainText('member');
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeVisible();
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await expect(page.getByRole('link', { name: 'API tokens' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Create token' })).toHaveCount(0);
    // Nothing says "admin" to a member, and there is no owner filter.
    await expect(page.getByText(/admin/i)).toHaveCount(0);
    await expect(page.getByLabel('Owner')).toHaveCount(0);
    await shot(page, '04-signed-in-member-empty');
    await page.goto('/tokens');
    await expect(page.getByText('Only admins manage tokens.')).toBeVisible();

    const response = await fetch(`${baseURL}/api/trpc/tokens.list`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(403);
  });
});

test('when the server cannot be reached, signing in says so, and a second try works', async ({ page, adminToken }) => {
  await page.goto('/');
  await page.route('**/api/trpc/me**', (route) => route.abort('connectionrefused'));
  await page.getByLabel('API token').fill(adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByText('The token could not be checked: the server could not be reached')).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId('signed-in-as')).toHaveCount(0);
  await page.unroute('**/api/trpc/me**');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('signed-in-as')).toContainText('admin');
});
