/**
 * `npm run studio` in a real browser: Prisma Studio behind the project's guard (src/tooling/studio.ts), on a
 * SQLite file of its own. The page must work under the guard's CSP, nothing it does may leave this machine (its
 * page calls Prisma's update server on its own, whatever the environment says), it must be reachable on
 * 127.0.0.1 only, and what docs/commands.md ("Prisma Studio") says Studio gets wrong (ids beyond 2^53) must still be what it gets wrong.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { expect, test } from '@playwright/test';
import Database from 'better-sqlite3';

import { applyMigrations } from '../../src/server/db/migrate';
import { childEnv, projectRoot } from '@test-support/build';
import { freePort, waitForExit } from '@test-support/processes';

test.describe('Prisma Studio (npm run studio)', () => {
  let dir: string;
  let studio: ChildProcess;
  let port: number;
  let output = '';

  test.beforeAll(async () => {
    // tsx, then Prisma's CLI loading Studio: seconds here, more on a busy machine. A bound against a hang only.
    test.setTimeout(180_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'plant-store-studio-'));
    const file = path.join(dir, 'plants.db');
    await applyMigrations({ databaseUrl: `file:${file}`, log: () => {} });
    const database = new Database(file);
    try {
      database.prepare(`INSERT INTO "User" ("name", "role") VALUES ('studio-owner', 'member')`).run();
      const insert = database.prepare(`INSERT INTO "Plant" ("id", "name", "nameFolded", "ownerId") VALUES (?, ?, ?, 1)`);
      insert.run(9007199254740993n, 'Beyond 2^53', 'beyond 2^53');
      insert.run(7n, 'Small', 'small');
    } finally {
      database.close();
    }
    port = await freePort();
    studio = spawn(process.execPath, [path.join(projectRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'src/tooling/studio.ts', '--port', String(port)], {
      cwd: projectRoot,
      env: childEnv({ DATABASE_URL: `file:${file}` }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    studio.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    studio.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    // Ready when it says so, or failed when it exits first.
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (output.includes(`Prisma Studio is running at http://127.0.0.1:${port}/`)) resolve();
        else if (studio.exitCode !== null) reject(new Error(`npm run studio exited with ${studio.exitCode}:\n${output}`));
        else setTimeout(check, 100);
      };
      check();
    });
  });

  test.afterAll(async () => {
    studio?.kill('SIGTERM');
    if (studio) await waitForExit(studio, 15_000);
    rmSync(dir, { recursive: true, force: true });
  });

  test('works under the CSP, and nothing it does leaves this machine', async ({ page }) => {
    const origin = `http://127.0.0.1:${port}`;
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __csp: string[] }).__csp = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    await page.goto(`${origin}/`);
    await page.getByText('Plant', { exact: true }).click();
    await expect(page.getByText('Beyond 2^53', { exact: true })).toBeVisible();
    // The page reports "studio_launched" after it has read the tables; by the time a table's rows show, it has.
    await expect.poll(() => requests.filter((url) => url === `${origin}/telemetry`).length).toBeGreaterThan(0);

    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    // Whatever the page tried beyond that was refused by the browser: its own calls to Prisma, nothing of Studio's own.
    const violations = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
    for (const violation of violations) expect(violation).toMatch(/^connect-src https:\/\/checkpoint\.prisma\.io\//);
  });

  test('shows an id beyond 2^53 rounded, as the README warns (9007199254740993 as …992)', async ({ page }) => {
    await page.goto(`http://127.0.0.1:${port}/`);
    await page.getByText('Plant', { exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: 'Beyond 2^53' });
    await expect(row).toContainText('9007199254740992');
    await expect(row).not.toContainText('9007199254740993');
  });

  test('answers on 127.0.0.1 only', async () => {
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
    test.skip(external === undefined, 'this machine has no address but loopback');
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: external, port }, () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
