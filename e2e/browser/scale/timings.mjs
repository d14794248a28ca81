// Times search, filters and paging in Chromium against a running server (docs/admin-page.md, "At scale"). Not a test:
// timings do not belong in a pass/fail suite. Usage: node e2e/browser/scale/timings.mjs <admin token> [base URL]
import { chromium } from '@playwright/test';
const [token, base = 'http://127.0.0.1:3917'] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
const range = page.getByTestId('plants-range');
const serverTimes = [];
page.on('requestfinished', async (request) => {
  if (!request.url().includes('plants.page')) return;
  const t = request.timing();
  serverTimes.push(Math.round(t.responseEnd - t.requestStart));
});
async function measure(label, action, expected) {
  const results = [];
  for (let i = 0; i < 3; i++) {
    await action.reset?.();
    const before = await range.innerText();
    serverTimes.length = 0;
    const t0 = Date.now();
    await action.run();
    await page.waitForFunction(([b, e]) => { const t = document.querySelector('[data-testid="plants-range"]')?.textContent ?? ''; return t !== b && !t.includes('loading') && (!e || new RegExp(e).test(t)); }, [before, expected ?? ''], { timeout: 30000, polling: 5 });
    results.push({ total: Date.now() - t0, request: serverTimes[0] ?? null, text: await range.innerText() });
  }
  const sorted = [...results].sort((a, b) => a.total - b.total);
  console.log(`${label.padEnd(44)} median ${sorted[1].total} ms (request ${sorted[1].request} ms)  [${results.map((r) => r.total).join(', ')}]  → ${results[2].text}`);
}
const t0 = Date.now();
await page.goto(base + '/plants');
await page.getByLabel('API token').fill(token);
await page.getByRole('button', { name: 'Sign in' }).click();
await range.waitFor();
console.log('first load after sign-in (100k count)', Date.now() - t0, 'ms');
const go = (path) => ({ reset: async () => { await page.goto(base + path); await range.waitFor(); } });
await measure('next page (unfiltered)', { ...go('/plants'), run: () => page.getByRole('button', { name: 'Next page' }).click() });
await measure('last page (unfiltered)', { ...go('/plants'), run: () => page.getByRole('button', { name: 'Last page' }).click() });
await measure('previous from last (unfiltered)', { ...go('/plants?page=last'), run: () => page.getByRole('button', { name: 'Previous page' }).click() });
await measure('search "orchid" (Enter)', { ...go('/plants'), run: async () => { await page.getByLabel('Search names').fill('orchid'); await page.getByLabel('Search names').press('Enter'); } });
await measure('search "STRASSE" (Enter, Unicode folding)', { ...go('/plants'), run: async () => { await page.getByLabel('Search names').fill('STRASSE'); await page.getByLabel('Search names').press('Enter'); } });
await measure('search "no. 99999" (rare match)', { ...go('/plants'), run: async () => { await page.getByLabel('Search names').fill('no. 99999'); await page.getByLabel('Search names').press('Enter'); } });
await measure('tag filter "rare" (chosen from the list)', { ...go('/plants'), run: async () => { const box = page.getByRole('combobox', { name: 'Tag' }); await box.fill('rare'); await page.getByRole('option', { name: /^rare/ }).click(); } });
await measure('next page, tag "rare"', { ...go('/plants?tag=rare'), run: () => page.getByRole('button', { name: 'Next page' }).click() });
await measure('last page, tag "rare"', { ...go('/plants?tag=rare'), run: () => page.getByRole('button', { name: 'Last page' }).click() });
await measure('last page, q "fern" + tag "shade"', { ...go('/plants?q=fern&tag=shade'), run: () => page.getByRole('button', { name: 'Last page' }).click() });
await measure('100 per page, last page', { ...go('/plants?size=100'), run: () => page.getByRole('button', { name: 'Last page' }).click() });
// Sorts: the range stays "1–25 of 100,000", so these wait for the first row to change instead.
async function measureRows(label, action) {
  const results = [];
  for (let i = 0; i < 3; i++) {
    await action.reset?.();
    const before = await page.locator('tr[data-plant-id]').first().getAttribute('data-plant-id');
    serverTimes.length = 0;
    const t0 = Date.now();
    await action.run();
    await page.waitForFunction((b) => { const first = document.querySelector('tr[data-plant-id]')?.getAttribute('data-plant-id'); return first && first !== b && !document.querySelector('[data-testid="plants-range"]')?.textContent?.includes('loading'); }, before, { timeout: 30000, polling: 5 });
    results.push({ total: Date.now() - t0, request: serverTimes[0] ?? null });
  }
  const sorted = [...results].sort((a, b) => a.total - b.total);
  console.log(`${label.padEnd(44)} median ${sorted[1].total} ms (request ${sorted[1].request} ms)  [${results.map((r) => r.total).join(', ')}]`);
}
const header = (name) => page.getByRole('columnheader', { name: new RegExp(`^${name}`) }).getByRole('button');
await measureRows('sort by name (from id order)', { ...go('/plants'), run: () => header('Name').click() });
await measureRows('sort change: name ascending → descending', { ...go('/plants?sort=name'), run: () => header('Name').click() });
await measure('next page, sorted by name', { ...go('/plants?sort=name'), run: () => page.getByRole('button', { name: 'Next page' }).click() });
await measure('last page, sorted by name', { ...go('/plants?sort=name'), run: () => page.getByRole('button', { name: 'Last page' }).click() });
await measureRows('sort by tag', { ...go('/plants'), run: () => header('Tag').click() });
await measureRows('sort by owner, descending', { ...go('/plants?sort=owner'), run: () => header('Owner').click() });
await measureRows('sort by created, descending', { ...go('/plants?sort=created'), run: () => header('Created').click() });
// The CSV export of every plant, as a REST client gets it (the page's button fetches the same).
for (const query of ['', '?sort=name']) {
  const started = Date.now();
  const response = await fetch(`${base}/api/plants/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  const bytes = (await response.arrayBuffer()).byteLength;
  console.log(`export of every plant${query ? ` (${query})` : ''}: ${response.status}, ${(bytes / 1e6).toFixed(1)} MB in ${Date.now() - started} ms`);
}
await browser.close();
