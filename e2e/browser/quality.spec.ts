import { mkdirSync } from 'node:fs';
import path from 'node:path';

import type { Page } from '@playwright/test';

import { addPlant, cliToken, expect, plantForm, plantRow, range, SCREENS_DIR, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';
import { expectWithinWidth, seriousViolations } from '@test-support/browser-checks';

/** Records CSP violations from the page itself, and console messages about them. */
async function watchCsp(page: Page): Promise<{ console: string[]; violations: () => Promise<string[]> }> {
  const consoleMessages: string[] = [];
  page.on('console', (message) => {
    if (/content security policy|refused to (load|execute|apply)/i.test(message.text())) consoleMessages.push(message.text());
  });
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __csp: string[] }).__csp = seen;
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  return { console: consoleMessages, violations: () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp) };
}

/** The window as it is (not the whole page): what a screenshot in the docs shows, at `50-<state>-<width>-<theme>.png`. */
async function windowShot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENS_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENS_DIR, `${name}.png`) });
}

test.describe('quality', () => {
  test('the new states are axe clean in light and dark, shot at 375, 1024 and 1920: news of a change elsewhere with the sort menu, the token form and role dialog', async ({
    page,
    rest,
    adminToken,
  }) => {
    const owner = uniqueName('states');
    const token = await cliToken(owner);
    const base = uniqueId();
    await Promise.all(Array.from({ length: 12 }, (_, index) => rest.mustCreatePlant(token, { id: base + BigInt(index), name: `State ${String(index).padStart(2, '0')}`, tag: index % 2 ? 'shade' : 'sun' })));
    await page.setViewportSize({ width: 375, height: 800 });
    await signIn(page, adminToken, 'admin', `/plants?owner=${owner}&size=10&sort=created&dir=desc`);
    await expect(range(page)).toHaveText('1–10 of 12');
    await expect(page.getByTestId('live')).toHaveAttribute('data-state', 'on');
    await rest.mustCreatePlant(token, { id: base + 100n, name: 'State, added elsewhere' });
    await expect(page.getByTestId('live-news')).toHaveText(/belongs here/);
    const states = async (view: string) => {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        expect(await seriousViolations(page), `${view}, ${scheme}`).toEqual([]);
        for (const width of [375, 1024, 1920]) {
          await page.setViewportSize({ width, height: 800 });
          await expect(page.locator('main table')).toHaveAttribute('data-fit-width', /^[1-9]/);
          await windowShot(page, `50-${view}-${width}-${scheme}`);
        }
        await page.setViewportSize({ width: 375, height: 800 });
      }
      await page.emulateMedia({ colorScheme: 'light' });
    };
    await expect(page.getByRole('combobox', { name: 'Sort' })).toHaveValue('created desc');
    await states('plants-news');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens' }).click();
    await page.getByLabel('Expires after (days)').fill('0');
    await page.getByLabel('Expires after (days)').blur();
    await expect(page.locator('#token-expiry-error')).toBeVisible();
    await states('tokens-expiry');
    await page.locator('tr[data-token-id]').first().getByRole('button', { name: /^Make a/ }).click();
    expect(await seriousViolations(page, ['dialog[open]']), 'role dialog').toEqual([]);
    await page.keyboard.press('Escape');
  });

  test('no serious or critical accessibility violations in any view, light and dark', async ({ page, adminToken, rest }) => {
    await page.goto('/');
    await expect(page.getByLabel('API token')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('API token').fill('nope');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('That token was not accepted')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);

    const id = uniqueId();
    await rest.mustCreatePlant(adminToken, { id, name: 'Axe plant', tag: 'a11y' });
    await signIn(page, adminToken, 'admin', `/plants?q=Axe`);
    await expect(plantRow(page, id)).toBeVisible();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `plants, ${scheme}`).toEqual([]);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await plantRow(page, id).getByRole('checkbox').check();
    await plantRow(page, id).getByRole('button', { name: /^Edit plant/ }).click();
    expect(await seriousViolations(page), 'edit row and bulk bar').toEqual([]);
    await page.keyboard.press('Escape');

    const form = plantForm(page);
    await form.open.click();
    await form.name.fill(' ');
    await form.submit.click();
    await expect(form.dialog.locator('#plant-name-error')).toBeVisible();
    expect(await seriousViolations(page), 'add dialog with errors').toEqual([]);
    await page.keyboard.press('Escape');

    await plantRow(page, id).getByRole('button', { name: /^Delete plant/ }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    expect(await seriousViolations(page), 'confirm dialog').toEqual([]);
    await page.keyboard.press('Escape');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens' }).click();
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `tokens, ${scheme}`).toEqual([]);
    }
  });

  test('pages carry a CSP that allows exactly their own inline scripts; every view runs under it with no violation', async ({ page, adminToken, baseURL, shot }) => {
    const csp = await watchCsp(page);
    const response = await page.goto('/');
    const headers = response!.headers();
    const policy = headers['content-security-policy'] ?? '';
    expect(policy).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]{44}')+;/);
    expect(policy).toContain("style-src 'self';");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');

    const allowed = [...policy.matchAll(/'sha256-([^']+)'/g)].map((match) => match[1]).sort();
    const inline = await page.locator('script:not([src])').evaluateAll(async (elements) => {
      const digests = [];
      for (const element of elements) {
        const bytes = new TextEncoder().encode(element.textContent ?? '');
        const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
        digests.push(btoa(String.fromCharCode(...digest)));
      }
      return digests;
    });
    expect([...new Set(inline)].sort()).toEqual(allowed);
    // No inline style in the HTML as served.
    const html = await (await fetch(`${baseURL}/plants`)).text();
    expect(html).not.toMatch(/<style[\s>]|\sstyle="/);

    await page.getByLabel('API token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signed-in-as')).toBeVisible();
    const id = -uniqueId();
    await addPlant(page, { id, name: 'CSP plant' });
    await page.getByLabel('Search names').fill('CSP plant');
    await page.getByLabel('Search names').press('Enter');
    await expect(plantRow(page, id)).toBeVisible();
    await plantRow(page, id).getByRole('button', { name: /^Edit plant/ }).click();
    await page.keyboard.press('Escape');
    await plantRow(page, id).getByRole('button', { name: /^Delete plant/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    await expect(plantRow(page, id)).toHaveCount(0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API tokens' }).click();
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('signed-in-as')).toBeVisible();
    await shot(page, '18-tokens-view');
    expect(csp.console).toEqual([]);
    expect(await csp.violations()).toEqual([]);

    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<img alt="" src="/nothing-here.png" onerror="window.__injected = true">'));
    await expect.poll(() => csp.violations()).toEqual([expect.stringContaining('script-src')]);
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
  });

  test('the API docs: the pages’ security headers and strict CSP, and Try it out shows int64 ids exactly', async ({ page, adminToken, rest, baseURL, shot }) => {
    const max = 9223372036854775807n;
    await rest.deletePlant(adminToken, max);
    await rest.mustCreatePlant(adminToken, { id: max, name: 'The largest id' });
    const csp = await watchCsp(page);
    const response = await page.goto('/api/docs');
    const headers = response!.headers();
    const pageHeaders = (await fetch(`${baseURL}/plants`)).headers;
    for (const name of ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy', 'permissions-policy', 'cross-origin-opener-policy']) {
      expect(headers[name], name).toBe(name === 'content-security-policy' ? pageHeaders.get(name)!.replace(/ 'sha256-[^']+'/g, '') : pageHeaders.get(name));
    }
    expect(headers['content-security-policy']).toContain("script-src 'self';");
    expect(headers['content-security-policy']).toContain("style-src 'self';");

    await page.getByRole('button', { name: /Authorize/ }).click();
    await page.locator('.modal-ux input').fill(adminToken);
    await page.locator('.modal-ux button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();
    const list = page.locator('#operations-plants-listPlants');
    await list.locator('.opblock-summary').click();
    await list.getByRole('button', { name: 'Try it out' }).click();
    await list.locator('tr[data-param-name="after"] input').fill((max - 1n).toString());
    await list.getByRole('button', { name: 'Execute' }).click();
    const body = list.locator('.live-responses-table .response-col_description pre').first();
    await expect(body).toContainText('"id": 9223372036854775807');
    await expect(body).not.toContainText('9223372036854776000');
    await shot(page, '19-api-docs-exact-id');
    expect(csp.console).toEqual([]);
    expect(await csp.violations()).toEqual([]);
  });

  for (const width of [375, 1280, 1920]) {
    test(`at ${width} px every action stays in view, with a 200-character unbroken name and long tags`, async ({ page, rest, shot }) => {
      await page.setViewportSize({ width, height: 900 });
      const name = uniqueName(`w${width}`);
      const token = await cliToken(name);
      const base = uniqueId();
      await rest.mustCreatePlant(token, { id: base, name: 'x'.repeat(200), tag: 'y'.repeat(100) });
      await rest.mustCreatePlant(token, { id: base + 1n, name: 'A plant with a rather long name that wraps on a phone', tag: 'narrow' });
      await rest.mustCreatePlant(token, { id: -9223372036854775807n + (base % 1_000_000n), name: 'Smallest' });
      await signIn(page, token, name);
      await expect(page.locator('tr[data-plant-id]')).toHaveCount(3);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      // Every row's buttons, the pager's and the bar's lie within the width: nothing needs a sideways scroll.
      await expectWithinWidth(page.locator('tr[data-plant-id]').getByRole('button'), width);
      await expectWithinWidth(page.getByRole('navigation', { name: 'Plant pages' }).getByRole('button'), width);
      await expectWithinWidth(page.locator('.view-head').getByRole('button'), width);
      await shot(page, `20-plants-${width}`);
    });
  }

  test('tokens fit their column at 1280 px; dark mode follows the system', async ({ page, adminToken, shot }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, adminToken, 'admin', '/tokens');
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    const table = await page.locator('table.tokens-table').boundingBox();
    const card = await page.locator('table.tokens-table').locator('xpath=ancestor::div[contains(@class,"card")][1]').boundingBox();
    expect(table!.x + table!.width).toBeLessThanOrEqual(card!.x + card!.width + 1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    await expectWithinWidth(page.locator('tr[data-token-id]').getByRole('button'), 1280);
    await shot(page, '21-tokens-1280');

    await page.emulateMedia({ colorScheme: 'dark' });
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [red, green, blue] = background.match(/\d+/g)!.map(Number);
    expect(red! + green! + blue!).toBeLessThan(150);
    await shot(page, '22-tokens-dark');
    await page.goto('/plants');
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeVisible();
    await shot(page, '23-plants-dark');
  });

  test('keyboard only: sign in, add a plant, delete it', async ({ page }) => {
    const name = uniqueName('keys');
    const token = await cliToken(name);
    await page.goto('/');
    await expect(page.getByLabel('API token')).toBeVisible();
    await page.keyboard.press('Tab');
    await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect(page.getByLabel('API token')).toBeFocused();
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('signed-in-as')).toContainText(name);
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeFocused();

    // The view's actions: export, import, columns, then Add plant.
    for (let step = 0; step < 4; step++) await page.keyboard.press('Tab');
    await expect(page.locator('.view-head').getByRole('button', { name: 'Add plant' })).toBeFocused();
    await page.keyboard.press('Enter');
    const form = plantForm(page);
    await expect(form.name).toBeFocused();
    // The proposed id is asked for as the dialog opens; on a busy machine Enter could come first.
    await expect(form.id).not.toHaveValue('');
    await page.keyboard.type('Keyboard fern');
    await page.keyboard.press('Enter');
    await expect(form.dialog).toHaveCount(0);
    await expect(range(page)).toHaveText('1–1 of 1');
    const row = page.locator('tr[data-plant-id]');
    await row.getByRole('button', { name: /^Delete plant/ }).focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('dialog')).toBeVisible();
    await expect(page.getByRole('dialog').getByRole('button', { name: 'Cancel' })).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(page.getByRole('dialog').getByRole('button', { name: 'Delete plant' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
    await expect(page.getByRole('heading', { name: 'Plants', level: 1 })).toBeFocused();
  });
});
