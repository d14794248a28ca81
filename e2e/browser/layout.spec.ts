import type { Page } from '@playwright/test';

import { seriousViolations } from '@test-support/browser-checks';
import { expect, signIn, test, uniqueId } from '@test-support/browser-fixtures';

/**
 * Every width from 320 to 2560 px, in both themes, for the three views' tables: one page load, then the
 * window is resized in place (the tables refit with a ResizeObserver). At each width a column's content box
 * must not be under its minimum, no two cells of a row may overlap, nothing may need a sideways scroll, and
 * every action must be on screen. Screenshots at 375, 1024, 1280 and 1920 in test-results/e2e/screens/.
 */
const WIDTHS = [...Array.from({ length: 57 }, (_, index) => 320 + index * 40), 375, 1024, 1280, 1920].sort((a, b) => a - b);
const SHOTS = new Set([375, 1024, 1280, 1920]);
/** The least a cell's content box may have, by the view's filling column, and for any other column. */
const FILL_MIN: Record<string, number> = { plants: 140, tokens: 100, webhooks: 120 };
const ANY_MIN = 20;

type Problem = string;

/** Runs in the page: every check of one width, as a list of what is wrong. */
function checkLayout({ width, fillMin, anyMin }: { width: number; fillMin: number; anyMin: number }): Problem[] {
  const problems: Problem[] = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > width) problems.push(`the page is ${doc.scrollWidth} px wide`);
  const table = document.querySelector('main table') as HTMLTableElement | null;
  if (!table) return ['no table'];
  const wrap = table.parentElement!;
  if (table.getBoundingClientRect().width > wrap.getBoundingClientRect().width + 1) problems.push('the table is wider than its card');
  const headers = [...table.querySelectorAll('thead th')] as HTMLElement[];
  const contentWidth = (cell: HTMLElement) => {
    const style = getComputedStyle(cell);
    return cell.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  };
  // The filling column is the one with no width class of its own: the widest by design.
  const widest = Math.max(...headers.map(contentWidth));
  for (const [index, header] of headers.entries()) {
    const box = contentWidth(header);
    const fill = box === widest;
    if (box < (fill ? fillMin : anyMin)) problems.push(`column ${index + 1} (${header.textContent}) has ${Math.round(box)} px`);
  }
  for (const row of table.querySelectorAll('tbody tr')) {
    const cells = [...row.children].map((cell) => cell.getBoundingClientRect());
    for (let index = 1; index < cells.length; index++) {
      if (cells[index]!.left < cells[index - 1]!.right - 0.5) problems.push(`cells ${index} and ${index + 1} of a row overlap`);
    }
    for (const action of row.querySelectorAll('button, a')) {
      const box = action.getBoundingClientRect();
      if (box.left < 0 || box.right > width) problems.push(`${action.getAttribute('aria-label') ?? action.textContent} is off screen (${Math.round(box.left)}–${Math.round(box.right)})`);
      // Nothing in a cell spills past it: a button cut by its cell would be unusable.
      const cell = action.closest('td')!.getBoundingClientRect();
      if (box.right > cell.right + 0.5 || box.left < cell.left - 0.5) problems.push(`${action.getAttribute('aria-label') ?? action.textContent} spills out of its cell`);
    }
  }
  return problems;
}

async function sweep(page: Page, view: string, scheme: string, shot: (page: Page, name: string) => Promise<void>): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    // Refitted: the table says which width it fitted, and that is its frame's width now.
    await expect
      .poll(() => page.evaluate(() => {
        const table = document.querySelector('main table') as HTMLElement | null;
        return table ? Number(table.dataset.fitWidth) === table.parentElement!.clientWidth : false;
      }))
      .toBe(true);
    const problems = await page.evaluate(checkLayout, { width, fillMin: FILL_MIN[view]!, anyMin: ANY_MIN });
    expect(problems, `${view}, ${scheme}, ${width} px`).toEqual([]);
    if (SHOTS.has(width)) await shot(page, `40-${view}-${width}-${scheme}`);
  }
}

test.describe('layout at every width', () => {
  test('plants, tokens and webhooks hold from 320 to 2560 px in light and dark; compact rows; axe clean per view and theme', async ({ page, rest, adminToken, baseURL, shot }) => {
    test.setTimeout(240_000);
    // The widest content there is: a 200-character unbroken name, a 100-character tag, int64 ids at both ends.
    const base = uniqueId();
    const owner = `layout-${base}`;
    await rest.mustCreatePlant(adminToken, { id: -9223372036854775808n + (base % 1000n), name: 'x'.repeat(200), tag: 'y'.repeat(100) });
    await rest.mustCreatePlant(adminToken, { id: 9223372036854775807n - (base % 1000n), name: 'Monstera deliciosa “Thai Constellation”, variegated', tag: 'tropical' });
    for (let index = 0n; index < 24n; index++) await rest.mustCreatePlant(adminToken, { id: base + index, name: `Plant ${index} of the layout sweep`, tag: index % 2n ? 'shade' : 'sun' });
    const endpoint = await fetch(`${baseURL}/api/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:8099/${'very-long-path/'.repeat(12)}${owner}`, events: ['plant.created', 'plant.deleted'], enabled: false, description: 'the layout sweep' }),
    });
    expect(endpoint.status).toBe(200);

    await page.setViewportSize({ width: 1280, height: 800 });
    await signIn(page, adminToken, 'admin', `/plants?q=layout%20sweep`);
    await expect(page.locator('tr[data-plant-id]')).toHaveCount(24);
    // Compact: at 1280 × 800 about 19 rows of the first screen are in view (Prisma Studio shows 19).
    await page.goto('/plants');
    await expect(page.locator('tr[data-plant-id]').first()).toBeVisible();
    // Other workers' plants change meanwhile (an admin sees every plant): the news of it takes no room of the rows'.
    const inView = await page.locator('tr[data-plant-id]').evaluateAll((rows) => rows.filter((row) => row.getBoundingClientRect().bottom <= window.innerHeight).length);
    expect(inView).toBeGreaterThanOrEqual(17);

    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [view, link] of [
        ['plants', 'Plants'],
        ['tokens', 'API tokens'],
        ['webhooks', 'Webhooks'],
      ] as const) {
        await page.setViewportSize({ width: 1280, height: 800 });
        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click();
        await expect(page.locator('main table')).toBeVisible();
        expect(await seriousViolations(page), `${view}, ${scheme}`).toEqual([]);
        await sweep(page, view, scheme, shot);
      }
    }
  });
});
