import { seriousViolations } from '@test-support/browser-checks';
import { cliToken, expect, range, signIn, test, uniqueId, uniqueName } from '@test-support/browser-fixtures';

const ROWS = 10_000;

/**
 * A file of 10,000 rows as the export writes them, three of which cannot be imported: an id that is not a
 * number, a row without a name, and an id the file has already. Ids beyond 2^53, kept exact.
 */
function tenThousandRows(firstId: bigint, tag: string): string {
  const lines = ['\uFEFFid,name,tag'];
  for (let index = 0; index < ROWS; index++) {
    const id = firstId + BigInt(index);
    if (index === 2_000) lines.push(`not-a-number,Bad id ${index},${tag}`);
    else if (index === 5_000) lines.push(`${id},,${tag}`);
    else if (index === 8_000) lines.push(`${firstId},Same id again,${tag}`);
    else lines.push(`${id},"Imported plant, no. ${index}",${tag}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

test.describe('CSV import', () => {
  test('10,000 rows: the preview with 3 refused rows and why, the apply with its progress, Stop and go on, and the table showing them', async ({ page, shot }) => {
    test.setTimeout(240_000);
    const name = uniqueName('importer');
    await signIn(page, await cliToken(name), name);
    const tag = `imported-${Date.now().toString(36)}`;
    const firstId = uniqueId();
    await page.getByRole('button', { name: /Import CSV/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Import plants from a CSV file' });
    await expect(dialog.getByLabel('CSV file')).toBeFocused();
    await dialog.getByLabel('CSV file').setInputFiles({ name: 'plants.csv', mimeType: 'text/csv', buffer: Buffer.from(tenThousandRows(firstId, tag)) });

    const status = dialog.getByRole('status');
    await expect(status).toHaveText('10,000 rows read: 9,997 plants to create, 0 to rename or re-tag, 0 already as the file says; 3 rows refused.', { timeout: 90_000 });
    const refused = dialog.getByRole('table', { name: 'Rows that will not be imported, and why' });
    await expect(refused.getByRole('row')).toHaveCount(4);
    await expect(refused.getByRole('row').nth(1)).toContainText('2,002');
    await expect(refused.getByRole('row').nth(1)).toContainText('Id must be an integer. (error 40003)');
    await expect(refused.getByRole('row').nth(2)).toContainText('Name is required. (error 40002)');
    await expect(refused.getByRole('row').nth(3)).toContainText(`A plant with id ${firstId} is on line 2 of this file already. (error 40006)`);
    expect(await seriousViolations(page, ['.import-dialog'])).toEqual([]);
    for (const [width, height] of [
      [375, 740],
      [1024, 768],
      [1920, 1080],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await shot(page, `60-import-preview-${width}-${scheme}`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });

    // Importing: the progress moves; Stop keeps what was applied, and Go on finishes it.
    await dialog.getByRole('button', { name: 'Import 9,997 rows' }).click();
    await expect(status).toHaveText(/^Importing: [\d,]+ of 9,997 rows applied\.$/);
    await expect(dialog.getByRole('progressbar', { name: 'Importing' })).toBeVisible();
    await expect(status).not.toHaveText('Importing: 0 of 9,997 rows applied.', { timeout: 60_000 });
    await shot(page, '61-import-applying');
    await dialog.getByRole('button', { name: 'Stop' }).click();
    await expect(status).toHaveText(/^Stopped after [\d,]+ of 9,997 rows: what was applied stays\./);
    const appliedAtStop = Number(/after ([\d,]+) of/.exec((await status.textContent()) ?? '')![1]!.replaceAll(',', ''));
    expect(appliedAtStop).toBeGreaterThan(0);
    expect(appliedAtStop).toBeLessThan(9_997);
    await dialog.getByRole('button', { name: 'Go on' }).click();
    await expect(status).toHaveText('9,997 plants created, 0 renamed or re-tagged, 0 already so.', { timeout: 180_000 });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toHaveCount(0);

    // The table shows them: all of the tag, exact ids beyond 2^53 included.
    await page.goto(`/plants?tag=${tag}`);
    await expect(range(page)).toHaveText('1–25 of 9,997');
    await expect(page.locator(`tr[data-plant-id="${firstId + 1n}"]`)).toContainText('Imported plant, no. 1');
    await page.goto(`/plants?tag=${tag}&page=last`);
    await expect(page.locator(`tr[data-plant-id="${firstId + BigInt(ROWS - 1)}"]`)).toBeVisible();
  });
});
