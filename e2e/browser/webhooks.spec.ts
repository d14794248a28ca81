import type { Page } from '@playwright/test';

import { errorCatalog } from '@/shared/errors';
import { WEBHOOK_RESPONSE_MAX_BYTES } from '@/shared/limits';
import { cliToken, expect, type Rest, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';
import { expectWithinWidth, seriousViolations } from '@test-support/browser-checks';
import { parseLossless } from '@test-support/http-client';
import { eventOf, type Receiver, startReceiver, verifies } from '@test-support/webhook-receiver';

/**
 * The webhooks view against the real server (run by the global setup with webhooks on, http to loopback
 * allowed, and a 100 ms retry base) and a real receiver on 127.0.0.1. Other test files create plants at the
 * same time, so every endpoint here also receives their events: each check looks for its own plant ids, and
 * each test deletes its endpoints when done. The log is newest first, so a burst of their events (a bulk
 * delete, 30 creates at once) pushes a delivery off the log's first page: a row is checked on the page that
 * starts at it (`pinnedLog`), never on the newest page while the endpoint still receives events.
 */

type EndpointInfo = { id: number; secret: string };

/** Registers an endpoint over REST (setup for tests about something else than the add dialog). */
async function registerEndpoint(baseURL: string, token: string, url: string, events = ['plant.created', 'plant.deleted']): Promise<EndpointInfo> {
  const response = await fetch(`${baseURL}/api/webhooks/endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const body = (await response.json()) as { id: number; secret: string };
  return { id: body.id, secret: body.secret };
}

async function deleteEndpoint(baseURL: string, token: string, id: number): Promise<void> {
  await fetch(`${baseURL}/api/webhooks/endpoints/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
}

type LoggedDelivery = { id: bigint; type: string; plantId: bigint | null };

/** The id of the endpoint's delivery of this event about this plant, read over REST page by page (ids exact). */
async function deliveryIdOf(baseURL: string, token: string, endpointId: number, plantId: bigint, type: string): Promise<number> {
  let before = '';
  for (;;) {
    const response = await fetch(`${baseURL}/api/webhooks/endpoints/${endpointId}/deliveries?limit=100${before}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const page = parseLossless(await response.text()) as LoggedDelivery[];
    const found = page.find((delivery) => delivery.plantId === plantId && delivery.type === type);
    if (found) return Number(found.id);
    expect(page.length, `no ${type} delivery of plant ${plantId} in the log of endpoint ${endpointId}`).toBe(100);
    before = `&before=${page.at(-1)!.id}`;
  }
}

/** The log's page that starts at this delivery: newer events arriving meanwhile cannot push it off. */
const pinnedLog = (endpointId: number, deliveryId: number | string) => `/webhooks?endpoint=${endpointId}&before=${Number(deliveryId) + 1}`;

/** What other test files do now and then: many plants at once, each an event for every endpoint here. */
async function burstOfOtherEvents(rest: Rest, token: string, count = 25): Promise<void> {
  const base = uniqueId();
  await Promise.all(Array.from({ length: count }, (_, index) => rest.mustCreatePlant(token, { id: base + BigInt(index), name: `Burst ${index}` })));
}

const endpointRow = (page: Page, id: number) => page.locator(`tr[data-endpoint-id="${id}"]`);
/** The log's row of the delivery about this plant and event. */
const deliveryRow = (page: Page, plantId: bigint, type = 'plant.created') =>
  page.locator('tr[data-delivery-id]').filter({ has: page.locator('td.id', { hasText: new RegExp(`^${plantId}$`) }) }).filter({ hasText: type });

const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 });

// Each test has its own receiver, endpoint and plants: they may run on both workers, beside the other files.
test.describe.configure({ mode: 'parallel' });

let receiver: Receiver;
test.beforeEach(async () => {
  receiver = await startReceiver();
  // A receiver that accepts, with a body: the delivery log shows "HTTP 200" and the answer's text.
  receiver.answer(() => ({ status: 200, body: 'ok', headers: { 'content-type': 'text/plain; charset=utf-8' } }));
});
test.afterEach(async () => {
  await receiver.close();
});

test.describe('webhooks (admins)', () => {
  test('add an endpoint: its secret shown once and copied; a plant made over REST is delivered signed and logged; test event, rotate, edit, disable, delete', async ({
    page,
    context,
    adminToken,
    rest,
    baseURL,
    shot,
  }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, adminToken, 'admin');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Webhooks' }).click();
    await expect(heading(page, 'Webhooks')).toBeVisible();
    await expect(nav.getByRole('link', { name: 'Webhooks' })).toHaveAttribute('aria-current', 'page');

    // Add: URL, events (both ticked by default), enabled.
    await page.locator('.view-head').getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await expect(dialog.getByLabel('URL')).toBeFocused();
    await dialog.getByLabel('URL').fill(receiver.url);
    await expect(dialog.getByRole('checkbox', { name: /plant\.created/ })).toBeChecked();
    await expect(dialog.getByRole('checkbox', { name: /plant\.deleted/ })).toBeChecked();
    await expect(dialog.getByRole('checkbox', { name: 'Enabled' })).toBeChecked();
    await dialog.getByLabel(/^Note/).fill('the browser test’s receiver');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog).toHaveCount(0);

    // The secret, once, selected and copyable.
    const panel = page.getByRole('region', { name: /^Signing secret for endpoint \d+$/ });
    await expect(panel).toBeVisible();
    await expect(panel).toContainText('it is shown only this once');
    const id = Number(await panel.getAttribute('data-endpoint-id'));
    const secretBox = panel.getByLabel('The signing secret');
    await expect(secretBox).toBeFocused();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await panel.getByRole('button', { name: 'Copy' }).click();
    await expect(panel.getByRole('status')).toHaveText('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const row = endpointRow(page, id);
    await expect(row).toContainText(receiver.url);
    await expect(row).toContainText('plant.created');
    await expect(row).toContainText('Enabled');
    await shot(page, '24-webhook-secret-once');
    // Nowhere else on the page, and not after a reload.
    await expect(page.getByText(secret)).toHaveCount(0);

    try {
      // A plant made over REST: its event arrives, signed with that secret, with the id exact.
      const plantId = uniqueId();
      await rest.mustCreatePlant(adminToken, { id: plantId, name: 'Webhook fern' });
      const delivered = await receiver.waitForMatch((request) => eventOf(request).plantId === plantId.toString());
      expect(eventOf(delivered).type).toBe('plant.created');
      expect(verifies(delivered, secret)).toBe(true);

      // Its log: the address names the endpoint.
      await row.getByRole('link', { name: `Delivery log of endpoint ${id} (${receiver.url})` }).click();
      await expect(page).toHaveURL(new RegExp(`/webhooks\\?endpoint=${id}$`));
      await expect(heading(page, `Endpoint ${id}`)).toBeFocused();
      // The panel stays while the view changes: it is shown once, and not lost by a click.
      await expect(panel).toBeVisible();
      await panel.getByRole('button', { name: 'Done' }).click();
      await expect(panel).toHaveCount(0);
      // The delivery is there, delivered on the first attempt; and after a page load the secret is nowhere.
      await page.goto(pinnedLog(id, await deliveryIdOf(baseURL!, adminToken, id, plantId, 'plant.created')));
      const logged = deliveryRow(page, plantId);
      await expect(logged).toHaveAttribute('data-state', 'delivered');
      await expect(logged).toContainText('HTTP 200');
      await expect(logged.getByTestId('attempts')).toHaveText('1 attempt');
      await expect(logged.getByRole('button', { name: /^Retry/ })).toHaveCount(0);
      await expect(page.getByText(secret)).toHaveCount(0);
      await shot(page, '25-webhook-log');

      // Send test event: feedback at once, and the delivery in the log, even with a burst of other files'
      // events arriving meanwhile (they pushed it off the newest page: CI saw it "pending" for 30 s).
      await page.getByRole('button', { name: 'Send test event' }).click();
      const sent = page.getByRole('status').filter({ hasText: 'A test event is on its way' });
      await expect(sent).toContainText(`A test event is on its way to endpoint ${id} (delivery`);
      const deliveryId = /delivery (\d+)/.exec((await sent.textContent()) ?? '')![1]!;
      await burstOfOtherEvents(rest, adminToken);
      await page.goto(pinnedLog(id, deliveryId));
      const testRow = page.locator(`tr[data-delivery-id="${deliveryId}"]`);
      await expect(testRow).toContainText('webhook.test');
      // Sent by the worker and then seen by the log's 1 s refetch: on a machine at load 40 that took over 10 s.
      await expect(testRow).toHaveAttribute('data-state', 'delivered', { timeout: 30_000 });
      const testEvent = await receiver.waitForMatch((request) => request.headers['webhook-id'] !== undefined && eventOf(request).type === 'webhook.test');
      expect(verifies(testEvent, secret)).toBe(true);

      // Rotate: asked first; the new secret shown once; both secrets sign for a day.
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const confirmRotate = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
      await expect(confirmRotate).toContainText('For 24 hours deliveries carry signatures with both');
      await confirmRotate.getByRole('button', { name: 'Rotate secret' }).click();
      const rotatedPanel = page.getByRole('region', { name: `New signing secret for endpoint ${id}` });
      await expect(rotatedPanel).toContainText('The previous secret keeps signing too until');
      const newSecret = await rotatedPanel.getByLabel('The signing secret').inputValue();
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(secret);
      await shot(page, '26-webhook-secret-rotated');
      const tests = receiver.received.length;
      await page.getByRole('button', { name: 'Send test event' }).click();
      const afterRotation = await receiver.waitForMatch((request) => receiver.received.indexOf(request) >= tests && eventOf(request).type === 'webhook.test');
      expect(verifies(afterRotation, newSecret)).toBe(true);
      expect(verifies(afterRotation, secret)).toBe(true);
      expect(String(afterRotation.headers['webhook-signature']).split(' ')).toHaveLength(2);

      // Edit the events: plant.deleted only. A plant made and deleted then sends its delete, never its create
      // (events to one endpoint arrive in order, so the create would have come first).
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const edit = page.getByRole('dialog', { name: `Edit endpoint ${id}` });
      await expect(edit.getByLabel('URL')).toHaveValue(receiver.url);
      await edit.getByRole('checkbox', { name: /plant\.created/ }).uncheck();
      await edit.getByRole('button', { name: 'Save endpoint' }).click();
      await expect(page.getByRole('status').filter({ hasText: `Endpoint ${id} is saved.` })).toBeVisible();
      const summary = page.locator('.endpoint-summary');
      await expect(summary.locator('.event-list li')).toHaveText(['plant.deleted']);
      const second = uniqueId();
      await rest.mustCreatePlant(adminToken, { id: second, name: 'Deleted at once' });
      expect((await rest.deletePlant(adminToken, second)).status).toBe(204);
      await receiver.waitForMatch((request) => eventOf(request).plantId === second.toString());
      expect(receiver.received.filter((request) => eventOf(request).plantId === second.toString()).map((request) => eventOf(request).type)).toEqual(['plant.deleted']);
      await page.goto(pinnedLog(id, await deliveryIdOf(baseURL!, adminToken, id, second, 'plant.deleted')));
      await expect(deliveryRow(page, second, 'plant.deleted')).toHaveAttribute('data-state', 'delivered');

      // Disable: no event is queued for it any more (the outbox row would be written with the change itself).
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      await edit.getByRole('checkbox', { name: 'Enabled' }).uncheck();
      await expect(edit).toContainText('No new events are queued for it while it is disabled');
      await edit.getByRole('button', { name: 'Save endpoint' }).click();
      await expect(summary).toContainText('Disabled');
      const third = uniqueId();
      await rest.mustCreatePlant(adminToken, { id: third, name: 'Unheard' });
      expect((await rest.deletePlant(adminToken, third)).status).toBe(204);
      // Disabled, the endpoint gets no new rows at all: its newest page holds still, and has no row of this plant.
      await page.goto(`/webhooks?endpoint=${id}`);
      await expect(page.locator('tr[data-delivery-id]').first()).toBeVisible();
      await expect(page.locator('tr[data-delivery-id]').filter({ has: page.locator('td.id', { hasText: third.toString() }) })).toHaveCount(0);

      // Delete, after a confirmation: back to the list, the row and the open secret panel gone.
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      const confirmDelete = page.getByRole('dialog', { name: 'Delete this endpoint?' });
      await expect(confirmDelete).toContainText(receiver.url);
      await shot(page, '27-webhook-delete-confirm');
      await confirmDelete.getByRole('button', { name: 'Delete endpoint' }).click();
      await expect(page).toHaveURL(/\/webhooks$/);
      await expect(page.getByRole('status').filter({ hasText: `Endpoint ${id} is deleted` })).toBeVisible();
      await expect(rotatedPanel).toHaveCount(0);
      await expect(endpointRow(page, id)).toHaveCount(0);
    } finally {
      await deleteEndpoint(baseURL!, adminToken, id);
    }
  });

  test('a receiver answering 500: attempts, status and next try in the log, its answer as text only; "Retry now" once it works', async ({
    page,
    adminToken,
    rest,
    baseURL,
    shot,
  }) => {
    page.on('dialog', (alert) => {
      throw new Error(`the page opened a ${alert.type()}: ${alert.message()}`);
    });
    const plantId = uniqueId();
    // More than the 4 KiB the server reads, with markup and a right-to-left override near the start.
    const answer = `<img src=x onerror=alert(1)><b>down</b> \u202Egnp.exe ${'z'.repeat(5000)}`;
    const kept = Buffer.from(answer, 'utf8').subarray(0, WEBHOOK_RESPONSE_MAX_BYTES).toString('utf8');
    let failing = true;
    // Only this plant's event fails: the others' (from other tests) go through and hold nothing back.
    receiver.answer((request) => (failing && eventOf(request).plantId === plantId.toString() ? { status: 500, body: answer, headers: { 'content-type': 'text/html' } } : { status: 200 }));
    const endpoint = await registerEndpoint(baseURL!, adminToken, receiver.url, ['plant.created']);
    try {
      await signIn(page, adminToken, 'admin', `/webhooks?endpoint=${endpoint.id}`);
      await expect(heading(page, `Endpoint ${endpoint.id}`)).toBeVisible();
      await rest.mustCreatePlant(adminToken, { id: plantId, name: 'Unlucky fern' });
      // An idle log looks for new events every 5 s; Refresh looks now. While a delivery is pending, every second.
      await page.getByRole('button', { name: 'Refresh' }).click();

      const row = deliveryRow(page, plantId);
      await expect(row).toHaveAttribute('data-state', 'pending');
      // Other tests' plants keep arriving at this endpoint (behind this failing delivery, in order): the log
      // is pinned to the page that starts at this delivery, so newer ones cannot push it off the first page.
      const deliveryId = Number(await row.getAttribute('data-delivery-id'));
      const pinned = (state = '') => `/webhooks?endpoint=${endpoint.id}${state ? `&state=${state}` : ''}&before=${deliveryId + 1}`;
      await page.goto(pinned());
      await expect(row.getByTestId('attempts')).toHaveText(/^([2-9]|\d\d+) attempts$/);
      await expect(row).toContainText('HTTP 500');
      // "in 3 sec." or "due now" (the delivery is due; it waits its turn), in the browser's language.
      await expect(row.locator('td[data-label="Next try"] time')).toHaveText(/^(due now|\D*\d.*)$/);
      const excerpt = row.locator('bdi.response-excerpt');
      await expect(excerpt).toContainText('<img src=x onerror=alert(1)><b>down</b> \u202Egnp.exe');
      expect(await excerpt.evaluate((element) => getComputedStyle(element).unicodeBidi)).toBe('isolate');
      await expect(page.locator('main img, main b')).toHaveCount(0);
      await expect(page.locator('.endpoint-summary')).toContainText('Failing');
      await expect(page.getByRole('note')).toContainText('Attempts to this endpoint have failed since');
      await shot(page, '28-webhook-failing');

      // The whole answer (what the server kept: its first 4 KiB), as text.
      await row.getByRole('button', { name: /^The whole answer to delivery/ }).click();
      const details = page.getByRole('dialog', { name: /^Delivery \d+$/ });
      await expect(details.locator('pre bdi')).toHaveText(kept);
      await expect(details.locator('img, b')).toHaveCount(0);
      await expect(details).toContainText('plant.created');
      await expect(details).toContainText(plantId.toString());
      await shot(page, '29-webhook-answer-as-text');
      await details.getByRole('button', { name: 'Close' }).click();

      // The state filter lives in the address.
      await page.getByLabel('State').selectOption('delivered');
      await expect(page).toHaveURL(new RegExp(`endpoint=${endpoint.id}&state=delivered`));
      await expect(row).toHaveCount(0);
      await page.goto(pinned('pending'));
      await expect(row).toBeVisible();

      // The receiver works again: "Retry now" says so at once, and the delivery goes through.
      failing = false;
      await row.getByRole('button', { name: /^Retry delivery \d+ now$/ }).click();
      await expect(page.getByRole('status').filter({ hasText: /^Delivery \d+ is due now/ })).toBeVisible();
      await page.goto(pinned());
      await expect(row).toHaveAttribute('data-state', 'delivered');
      await expect(row).toContainText('HTTP 200');
      await expect(page.locator('.endpoint-summary')).toContainText('Enabled');
      const delivered = receiver.received.filter((request) => eventOf(request).plantId === plantId.toString());
      expect(delivered.length).toBeGreaterThanOrEqual(3);
      expect(new Set(delivered.map((request) => request.headers['webhook-id'])).size).toBe(1);
      expect(verifies(delivered.at(-1)!, endpoint.secret)).toBe(true);
    } finally {
      await deleteEndpoint(baseURL!, adminToken, endpoint.id);
    }
  });

  test('a held queue: “after #N”; retry all, discard, retry the failed; row actions fit, 375–1920 px', async ({ page, adminToken, rest, baseURL, shot }) => {
    const first = uniqueId();
    let failing = true;
    receiver.answer((request) => (failing && eventOf(request).plantId === first.toString() ? { status: 500, body: 'down' } : { status: 200 }));
    const endpoint = await registerEndpoint(baseURL!, adminToken, receiver.url, ['plant.created']);
    try {
      await rest.mustCreatePlant(adminToken, { id: first, name: 'Head of the queue' });
      const held = [1n, 2n, 3n].map((step) => first + step);
      for (const id of held) await rest.mustCreatePlant(adminToken, { id, name: `Held ${id}` });
      const headId = await deliveryIdOf(baseURL!, adminToken, endpoint.id, first, 'plant.created');
      // Disabled: nothing new is queued or sent, so the queue holds what it holds while the test looks.
      const disabled = await fetch(`${baseURL}/api/webhooks/endpoints/${endpoint.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: '{"enabled":false}',
      });
      expect(disabled.status).toBe(200);
      // Each page pinned to a row of this test: other files' events may lie between them.
      const lastHeldId = await deliveryIdOf(baseURL!, adminToken, endpoint.id, held.at(-1)!, 'plant.created');
      await signIn(page, adminToken, 'admin', pinnedLog(endpoint.id, lastHeldId));
      await expect(deliveryRow(page, held.at(-1)!).locator('td[data-label="Next try"]')).toHaveText(`after #${headId}`);
      for (const id of held) if ((await deliveryRow(page, id).count()) > 0) await expect(deliveryRow(page, id).locator('td[data-label="Next try"]')).toHaveText(`after #${headId}`);

      for (const width of [1280, 375, 1024, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        await expect(page.locator('table.deliveries-table')).toHaveAttribute('data-fit-width', /^[1-9]/);
        // Each row's buttons lie inside their cell: nothing cut off by it.
        const spills = await page.locator('tr[data-delivery-id] button').evaluateAll((buttons) =>
          buttons
            .filter((button) => {
              const box = button.getBoundingClientRect();
              const cell = button.closest('td')!.getBoundingClientRect();
              return box.left < cell.left - 0.5 || box.right > cell.right + 0.5;
            })
            .map((button) => `${button.getAttribute('aria-label') ?? button.textContent}: ${JSON.stringify(button.getBoundingClientRect())} in ${JSON.stringify(button.closest('td')!.getBoundingClientRect())}`),
        );
        expect(spills, `buttons cut off at ${width} px`).toEqual([]);
        await expectWithinWidth(page.locator('.backlog__actions').getByRole('button'), width);
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          await shot(page, `50-webhook-queue-${width}-${scheme}`);
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto(pinnedLog(endpoint.id, headId));
      await expect(deliveryRow(page, first).locator('td[data-label="Next try"]')).toHaveText(/^(due now|\D*\d.*)$/);

      const counts = page.getByTestId('delivery-counts');
      const waiting = Number(await counts.locator('dd').first().textContent());
      expect(waiting).toBeGreaterThanOrEqual(4);
      await page.getByRole('button', { name: `Retry all ${waiting} waiting now` }).click();
      await expect(page.getByRole('status').filter({ hasText: `${waiting} deliveries waiting for this endpoint are due now` })).toBeVisible();

      await page.getByRole('button', { name: `Discard ${waiting} waiting` }).click();
      const confirm = page.getByRole('dialog', { name: `Discard ${waiting} waiting deliveries?` });
      await confirm.getByRole('button', { name: 'Discard' }).click();
      await expect(page.getByRole('status').filter({ hasText: `Discarded ${waiting} deliveries` })).toBeVisible();
      await expect(counts.locator('dd').first()).toHaveText('0');
      await expect(deliveryRow(page, first)).toHaveAttribute('data-state', 'failed');
      await expect(deliveryRow(page, first)).toContainText('discarded by an admin, not sent');
      // The button went with the waiting deliveries: the cursor is on the queue's heading, not on <body>.
      await expect(page.getByRole('heading', { name: 'Queue' })).toBeFocused();
      expect(await seriousViolations(page, ['.backlog', '.deliveries-table'])).toEqual([]);

      // Enabled again, the receiver working: the failed ones, retried all at once, are delivered in order.
      failing = false;
      const enabled = await fetch(`${baseURL}/api/webhooks/endpoints/${endpoint.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: '{"enabled":true}',
      });
      expect(enabled.status).toBe(200);
      await page.getByRole('button', { name: /^Retry all \d+ failed$/ }).click();
      await expect(page.getByRole('status').filter({ hasText: /given up (is|are) waiting again/ })).toBeVisible();
      await expect(deliveryRow(page, first)).toHaveAttribute('data-state', 'delivered', { timeout: 20_000 });
      const ours = [first, ...held].map(String);
      const received = () => receiver.received.filter((request) => request.body && ours.includes(eventOf(request).plantId ?? '')).map((request) => eventOf(request).plantId);
      // After the head's failed attempts, each once, in order.
      await expect.poll(() => received().slice(-4), { timeout: 20_000 }).toEqual(ours);
    } finally {
      await deleteEndpoint(baseURL!, adminToken, endpoint.id);
    }
  });

  test('refusals: the form’s own checks, the SSRF guard’s by the URL field, and webhooks switched off as a notice', async ({ page, adminToken, shot }) => {
    await signIn(page, adminToken, 'admin', '/webhooks');
    await page.locator('.view-head').getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    const url = dialog.getByLabel('URL');
    await dialog.getByRole('checkbox', { name: /plant\.created/ }).uncheck();
    await dialog.getByRole('checkbox', { name: /plant\.deleted/ }).uncheck();
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog.locator('#endpoint-new-url-error')).toHaveText('URL must not be empty.');
    await expect(dialog.locator('#endpoint-new-events-error')).toHaveText('Events must name at least one event type.');
    await expect(url).toBeFocused();
    await dialog.getByRole('checkbox', { name: /plant\.created/ }).check();
    await expect(dialog.locator('#endpoint-new-events-error')).toHaveCount(0);

    // The suite's server allows http to loopback and private addresses; these it refuses all the same.
    const refused: [string, string][] = [
      ['http://169.254.169.254/latest/meta-data/', 'http:// is allowed only to a loopback address; 169.254.169.254 is not one: use https.'],
      ['https://0.0.0.0/', '0.0.0.0 is not a destination (an unspecified address).'],
      ['ftp://example.com/', 'The webhook URL must use https://, not ftp:.'],
    ];
    for (const [target, message] of refused) {
      await url.fill(target);
      await dialog.getByRole('button', { name: 'Add endpoint' }).click();
      await expect(dialog.locator('#endpoint-new-url-error')).toHaveText(message);
      await expect(url).toHaveAttribute('aria-invalid', 'true');
      await expect(url).toBeFocused();
    }
    await expect(page.getByRole('region', { name: /Signing secret/ })).toHaveCount(0);
    expect(await seriousViolations(page), 'add dialog with a refusal').toEqual([]);
    await url.fill('http://169.254.169.254/latest/meta-data/');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog.locator('#endpoint-new-url-error')).toBeVisible();
    await shot(page, '30-webhook-ssrf-refused');

    // A server without WEBHOOKS_SECRET_KEY answers 503 / 50301: the dialog says so as a notice. (This suite's
    // server has a key, so the real answer is rewritten into that one.)
    const { status, value } = errorCatalog.webhooksNotConfigured;
    await page.route('**/api/trpc/webhooks.create**', async (route) => {
      const response = await route.fetch();
      const batch = (await response.json()) as { error: { json: { message: string; data: Record<string, unknown> } } }[];
      const error = batch[0]!.error.json;
      error.message = 'webhooks are off on this server: set WEBHOOKS_SECRET_KEY (32 random bytes, e.g. `openssl rand -base64 32`) and restart it';
      error.data = { ...error.data, code: 'SERVICE_UNAVAILABLE', httpStatus: status, error: value };
      delete error.data.field;
      await route.fulfill({ response, status, json: batch });
    });
    await url.fill('https://hooks.example.com/plants');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog.getByRole('alert')).toHaveText(
      'The endpoint was not added: webhooks are off on this server: set WEBHOOKS_SECRET_KEY (32 random bytes, e.g. `openssl rand -base64 32`) and restart it.',
    );
    await expect(dialog.locator('#endpoint-new-url-error')).toHaveCount(0);
    await page.keyboard.press('Escape');

    // An address naming an endpoint that is not there (deleted meanwhile) says so, with the way back.
    await page.goto('/webhooks?endpoint=2147483647');
    const missing = page.getByRole('alert').filter({ hasText: 'There is no webhook endpoint' });
    await expect(missing).toHaveText(/^There is no webhook endpoint 2147483647: it may have been deleted\./);
    await missing.getByRole('link', { name: 'All endpoints' }).click();
    await expect(heading(page, 'Webhooks')).toBeVisible();
  });

  test('a member sees no Webhooks item, and its address gives the same refusal as the tokens view; the router refuses them too', async ({ page, baseURL }) => {
    const name = uniqueName('hookless');
    const token = await cliToken(name, 'member');
    await signIn(page, token, name);
    await expect(page.getByRole('link', { name: 'Webhooks' })).toHaveCount(0);
    await page.goto('/webhooks');
    await expect(page.getByTestId('signed-in-as')).toContainText(name);
    await expect(heading(page, 'Webhooks')).toBeVisible();
    await expect(page.locator('.notice--info')).toHaveText('Only admins manage webhooks. Ask an admin if a program of yours should hear about changes to plants.');
    await expect(page.getByRole('button', { name: 'Add endpoint' })).toHaveCount(0);
    const response = await fetch(`${baseURL}/api/trpc/webhooks.list`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(403);
  });

  test('accessible (axe, light and dark) and every action in view at 375 and 1280 px, list and log', async ({ page, adminToken, rest, baseURL, shot }) => {
    const endpoint = await registerEndpoint(baseURL!, adminToken, `${receiver.url}?${'long-query='.repeat(30)}`);
    try {
      const plantId = uniqueId();
      await rest.mustCreatePlant(adminToken, { id: plantId, name: 'Measured fern' });
      await signIn(page, adminToken, 'admin', '/webhooks');
      await expect(endpointRow(page, endpoint.id)).toBeVisible();
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        expect(await seriousViolations(page), `endpoints, ${scheme}`).toEqual([]);
      }
      await page.goto(`/webhooks?endpoint=${endpoint.id}`);
      // Other files' plants reach this endpoint too: the rows on the page are whichever came last.
      await expect(page.locator('tr[data-delivery-id][data-state="delivered"]').first()).toBeVisible();
      expect(await seriousViolations(page), 'log, dark').toEqual([]);
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [red, green, blue] = background.match(/\d+/g)!.map(Number);
      expect(red! + green! + blue!).toBeLessThan(150);
      await shot(page, '31-webhook-log-dark');
      await page.emulateMedia({ colorScheme: 'light' });
      expect(await seriousViolations(page), 'log, light').toEqual([]);
      await page.locator('tr[data-delivery-id]').first().getByRole('button', { name: /^Details of delivery/ }).click();
      await expect(page.getByRole('dialog')).toBeVisible();
      expect(await seriousViolations(page), 'delivery dialog').toEqual([]);
      await page.keyboard.press('Escape');

      for (const width of [375, 1280]) {
        await page.setViewportSize({ width, height: 900 });
        await page.goto('/webhooks');
        await expect(endpointRow(page, endpoint.id)).toBeVisible();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await expectWithinWidth(page.locator('tr[data-endpoint-id]').locator('a, button'), width);
        await expectWithinWidth(page.locator('.view-head').getByRole('button'), width);
        await shot(page, `32-webhooks-${width}`);

        await page.goto(`/webhooks?endpoint=${endpoint.id}`);
        await expect(page.locator('tr[data-delivery-id]').first()).toBeVisible();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await expectWithinWidth(page.locator('.endpoint-actions').getByRole('button'), width);
        await expectWithinWidth(page.locator('tr[data-delivery-id]').getByRole('button'), width);
        await expectWithinWidth(page.getByRole('navigation', { name: 'Delivery pages' }).getByRole('button'), width);
        await expectWithinWidth(page.locator('.log-head').locator('select, button'), width);
        await shot(page, `33-webhook-log-${width}`);
      }

      // Pages by id: 21 test events fill more than a page of 20; older and back, in the address. Disabled
      // first, so other files' events stop arriving: a refresh between reading the page and "Older" would
      // otherwise move the page under the test (the test events wait, unsent, which is all paging needs).
      const disabled = await fetch(`${baseURL}/api/webhooks/endpoints/${endpoint.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: '{"enabled":false}',
      });
      expect(disabled.status).toBe(200);
      for (let sent = 0; sent < 21; sent++) {
        const response = await fetch(`${baseURL}/api/webhooks/endpoints/${endpoint.id}/test`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(response.status).toBe(200);
      }
      await page.getByRole('button', { name: 'Refresh' }).click();
      const pager = page.getByRole('navigation', { name: 'Delivery pages' });
      await expect(page.getByTestId('deliveries-range')).toHaveText(/^20 of \d+ deliveries, newest first$/);
      await expect(pager.getByRole('button', { name: 'Newer deliveries' })).toHaveAttribute('aria-disabled', 'true');
      const ids = async () => (await page.locator('tr[data-delivery-id]').evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-delivery-id')))));
      const firstPage = await ids();
      await pager.getByRole('button', { name: 'Older deliveries' }).click();
      await expect(page).toHaveURL(new RegExp(`endpoint=${endpoint.id}&before=${firstPage.at(-1)}$`));
      // Not "(loading…)": the rows are the older page's, not the newest kept on screen meanwhile.
      await expect(page.getByTestId('deliveries-range')).toHaveText(new RegExp(`deliveries?, older than #${firstPage.at(-1)}$`));
      const older = await ids();
      expect(older.length).toBeGreaterThan(0);
      expect(Math.max(...older)).toBeLessThan(Math.min(...firstPage));
      await pager.getByRole('button', { name: 'Newer deliveries' }).click();
      await expect(page).toHaveURL(new RegExp(`endpoint=${endpoint.id}$`));
      await expect(page.getByTestId('deliveries-range')).toHaveText(/^20 of \d+ deliveries, newest first$/);
    } finally {
      await deleteEndpoint(baseURL!, adminToken, endpoint.id);
    }
  });
});
