import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

import { addPlant, cliToken, expect, plantForm, plantRow, signIn, test, uniqueId, uniqueName } from './fixtures';

async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node) => node.target.join(' ')) }));
}

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

test.describe('quality', () => {
  test('no serious or critical accessibility violations, signed out and signed in', async ({ page, adminToken, rest }) => {
    await page.goto('/');
    await expect(page.getByLabel('API token')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);

    // With a refused token's message showing.
    await page.getByLabel('API token').fill('nope');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('That token was not accepted')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);

    // Signed in as admin: plants, the create form with errors, tokens.
    const id = uniqueId();
    await rest.mustCreatePlant(adminToken, { id, name: 'Axe plant', tag: 'a11y' });
    await signIn(page, adminToken, 'admin');
    await expect(page.locator('tr[data-plant-id]').first()).toBeVisible();
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);

    await plantForm(page).submit.click();
    await expect(page.locator('#plant-id-error')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);

    // The confirmation dialog.
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.locator('tr[data-plant-id]').first().getByRole('button', { name: /Delete/ }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
  });

  test('pages carry a CSP that allows exactly their own inline scripts, and security headers; the page runs under it with no violation', async ({ page, adminToken, baseURL, shot }) => {
    const csp = await watchCsp(page);
    const response = await page.goto('/');
    const headers = response!.headers();
    const policy = headers['content-security-policy'] ?? '';
    expect(policy).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/=]{44}')+;/);
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(policy).toContain("base-uri 'self'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');

    // Every inline script of the page is one the policy lists by its hash, and every listed hash is used.
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
    expect(inline.length).toBeGreaterThan(0);
    expect([...new Set(inline)].sort()).toEqual(allowed);
    // External scripts come from this origin only.
    const sources = await page.locator('script[src]').evaluateAll((elements) => elements.map((element) => (element as HTMLScriptElement).src));
    expect(sources.every((source) => source.startsWith(`${baseURL}/`))).toBe(true);

    // Work through the page: sign in, create, open a dialog, show the tokens.
    await page.getByLabel('API token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signed-in-as')).toBeVisible();
    // Negative: the admin sees every plant, and this one must be on the first page.
    const id = -uniqueId();
    await addPlant(page, { id, name: 'CSP plant' });
    await expect(plantRow(page, id)).toBeVisible();
    await plantRow(page, id).getByRole('button', { name: /Delete/ }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete plant' }).click();
    await expect(plantRow(page, id)).toHaveCount(0);
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('signed-in-as')).toBeVisible();
    await shot(page, '15-csp-signed-in');

    expect(csp.console).toEqual([]);
    expect(await csp.violations()).toEqual([]);

    // The policy is really enforced: injected markup with an inline handler (the classic XSS) does not run.
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<img alt="" src="/nothing-here.png" onerror="window.__injected = true">'));
    await expect.poll(() => csp.violations()).toEqual([expect.stringContaining('script-src')]);
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();

    // The API answers JSON under a policy that lets nothing run or frame it.
    const api = await fetch(`${baseURL}/api/plants`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(api.status).toBe(200);
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  });

  test('the API docs run under their own CSP and security headers, with no violation', async ({ page, shot }) => {
    const csp = await watchCsp(page);
    const response = await page.goto('/api/docs');
    const headers = response!.headers();
    const policy = headers['content-security-policy'] ?? '';
    expect(policy).toContain("script-src 'self';");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("object-src 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
    await expect(page.getByRole('heading', { name: /Plant Store/ })).toBeVisible();
    await expect(page.getByRole('button', { name: /Authorize/ })).toBeVisible();
    await shot(page, '18-api-docs');
    expect(csp.console).toEqual([]);
    expect(await csp.violations()).toEqual([]);
  });

  test('works at 375 px wide, without sideways scrolling of the page', async ({ page, adminToken, rest, shot }) => {
    await page.setViewportSize({ width: 375, height: 812 });
    await page.goto('/');
    await expect(page.getByLabel('API token')).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await shot(page, '16-mobile-signed-out');

    await rest.mustCreatePlant(adminToken, { id: uniqueId(), name: 'A plant with a rather long name to wrap on a phone', tag: 'narrow' });
    await signIn(page, adminToken, 'admin');
    await expect(page.locator('tr[data-plant-id]').first()).toBeVisible();
    await expect(page.locator('tr[data-token-id]').first()).toBeVisible();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await expect(plantForm(page).submit).toBeInViewport();
    await shot(page, '17-mobile-signed-in');
  });

  test('keyboard only: sign in, add a plant, delete it', async ({ page }) => {
    const name = uniqueName('keys');
    const token = await cliToken(name);
    await page.goto('/');
    await expect(page.getByLabel('API token')).toBeVisible();
    // The skip link comes first, then the token field.
    await page.keyboard.press('Tab');
    await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(page.getByLabel('API token')).toBeFocused();
    await page.keyboard.type(token);
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('signed-in-as')).toContainText(name);
    await expect(page.getByRole('heading', { name: 'Plants', level: 2 })).toBeFocused();

    const form = plantForm(page);
    await page.keyboard.press('Tab');
    await expect(form.id).toBeFocused();
    const id = uniqueId();
    await page.keyboard.type(id.toString());
    await page.keyboard.press('Tab');
    await page.keyboard.type('Keyboard fern');
    await page.keyboard.press('Enter');
    await expect(plantRow(page, id)).toBeVisible();
    await expect(form.id).toBeFocused();

    await plantRow(page, id).getByRole('button', { name: /Delete/ }).focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('dialog')).toBeVisible();
    await page.keyboard.press('Shift+Tab');
    await expect(page.getByRole('dialog').getByRole('button', { name: 'Delete plant' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(plantRow(page, id)).toHaveCount(0);
    // The last row is gone: focus goes to the section heading.
    await expect(page.getByRole('heading', { name: 'Plants', level: 2 })).toBeFocused();
    await expect(page.getByText('No plants yet — add the first.')).toBeVisible();
  });
});
