import type { Browser, Page } from '@playwright/test';

import { createPostgresDatabase, type TestDatabase } from '@test-support/database';
import { postgresBinDir, type PrivatePostgres, startPrivatePostgres } from '@test-support/postgres';
import { type RunningServer, startServer } from '@test-support/server-process';
import { seriousViolations } from '@test-support/browser-checks';
import { expect, test } from '@test-support/browser-fixtures';

/**
 * The live feed as scaled out: two instances of the built server on one private PostgreSQL, the admin page
 * open on A, and a REST client's create, rename and delete sent to B. B's commits never wake A's process:
 * they reach A's page only through A's poll of the change log in the shared database, so this is the test
 * that fails when the feed works on one process only (e2e/api/live.test.ts checks the same at the stream
 * level). Skipped only where PostgreSQL's binaries are absent; CI installs them.
 */
const binaries = postgresBinDir();
/** "Within a second" is the promise; a busy machine gets some slack, a feed that never arrives does not. */
const LIVE_WITHIN_MS = 5_000;

let postgres: PrivatePostgres | undefined;
let database: TestDatabase | undefined;
let instanceA: RunningServer | undefined;
let instanceB: RunningServer | undefined;

test.describe('the live feed across two instances on PostgreSQL', () => {
  test.skip(binaries === undefined, 'PostgreSQL is not installed here (no initdb on PATH or in /usr/lib/postgresql/*/bin)');

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    postgres = await startPrivatePostgres();
    database = await createPostgresDatabase(postgres.url, 'plant_store_browser_');
    // One at a time: the first migrates the fresh database and prints the first admin's token.
    instanceA = await startServer({ database });
    instanceB = await startServer({ database });
  });

  test.afterAll(async () => {
    await Promise.all([instanceA?.stop(), instanceB?.stop()]);
    await database?.drop();
    postgres?.stop();
  });

  async function openOn(browser: Browser, server: RunningServer, token: string): Promise<Page> {
    const context = await browser.newContext({ baseURL: server.baseUrl });
    const page = await context.newPage();
    await page.goto('/plants?sort=name');
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('signed-in-as')).toBeVisible();
    return page;
  }

  test('a REST create, rename and delete on instance B show on the admin page of instance A without a reload; axe clean in both themes', async ({ browser }) => {
    const a = instanceA!;
    const b = instanceB!;
    expect(a.adminToken, 'instance A started on the fresh database and printed the first admin token').toMatch(/^pst_/);
    const program = await b.createToken('live-program', 'member');
    const send = async (method: string, path: string, body?: string, contentType = 'application/json') => {
      const response = await fetch(`${b.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${program.token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
        ...(body === undefined ? {} : { body }),
      });
      expect(response.status, `${method} ${path} on B: ${await response.clone().text()}`).toBe(method === 'DELETE' ? 204 : 200);
      return Date.now();
    };
    const anchorId = 4_611_686_018_427_387_904n;
    const plantId = 9_007_199_254_740_993n;
    const answered = await fetch(`${a.baseUrl}/api/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.adminToken}`, 'content-type': 'application/json' },
      body: `{"id":${anchorId},"name":"Anchor, made on A"}`,
    });
    expect(answered.status).toBe(200);

    const page = await openOn(browser, a, a.adminToken);
    const row = (id: bigint) => page.locator(`tr[data-plant-id="${id}"]`);
    await expect(row(anchorId)).toBeVisible();
    await expect(page.getByTestId('live')).toHaveAttribute('data-state', 'on');
    // Cleared only by a new document: it must still be there at the end.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

    // Created on B: A says so at once (the page has room for it), and Refresh (a refetch, not a reload) brings it in.
    const createdAt = await send('POST', '/api/plants', `{"id":${plantId},"name":"Made on B","tag":"remote"}`);
    const news = page.getByTestId('live-news');
    await expect(news).toHaveText('1 new plant belongs here.', { timeout: LIVE_WITHIN_MS });
    const createSeenMs = Date.now() - createdAt;
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `plants with news of a change elsewhere, ${scheme}`).toEqual([]);
    }
    await page.locator('.live-line').getByRole('button', { name: 'Refresh' }).click();
    await expect(row(plantId).locator('td.name')).toHaveText('Made on B');
    await expect(news).toHaveText('');

    // Renamed on B: the row shows the new name where it stands, marked.
    const renamedAt = await send('PATCH', `/api/plants/${plantId}`, '{"name":"Renamed on B","tag":null}', 'application/merge-patch+json');
    await expect(row(plantId).locator('.live-mark')).toHaveText('changed elsewhere', { timeout: LIVE_WITHIN_MS });
    const renameSeenMs = Date.now() - renamedAt;
    await expect(row(plantId).locator('td.name')).toContainText('Renamed on B');

    // Deleted on B: marked where it stands, its actions off.
    const deletedAt = await send('DELETE', `/api/plants/${plantId}`);
    await expect(row(plantId).locator('.live-mark')).toHaveText('deleted elsewhere', { timeout: LIVE_WITHIN_MS });
    const deleteSeenMs = Date.now() - deletedAt;
    await expect(row(plantId).getByRole('button', { name: /^Delete plant/ })).toHaveAttribute('aria-disabled', 'true');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await seriousViolations(page), `plants with a live mark, ${scheme}`).toEqual([]);
    }
    // Turning the view (a fetch, no reload) shows the table as it is now: the plant is gone, the anchor stays.
    await page.getByRole('columnheader', { name: /^Name/ }).getByRole('button').click();
    await expect(page).toHaveURL(/sort=name&dir=desc/);
    await expect(row(plantId)).toHaveCount(0);
    await expect(row(anchorId)).toBeVisible();
    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), 'no reload happened').toBe(true);
    test.info().annotations.push({ type: 'live delay (ms): create, rename, delete', description: `${createSeenMs}, ${renameSeenMs}, ${deleteSeenMs}` });
    await page.context().close();
  });
});
