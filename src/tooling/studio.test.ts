// `npm run studio`'s wrapper: what Prisma Studio is started with, and the guard in front of it, against a real
// HTTP server standing in for Studio (the page itself, in a browser, is e2e/browser/studio.spec.ts).
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEFAULT_DATABASE_URL } from '@/server/db/database-url';

import { createStudioGuard, STUDIO_CSP, studioArguments, studioEnvironment, studioReadyMessage } from './studio';
import { prismaCliDatabaseUrl, prismaCommand, readOnlyPostgresUrl } from './studio-access';

describe('what Prisma Studio is started with', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plant-store-studio-'));
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'plants.db'), '');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("turns off the CLI's update check and usage events, and its own browser", () => {
    const env = studioEnvironment({ DATABASE_URL: 'file:./data/plants.db', PATH: '/usr/bin' });
    expect(env).toMatchObject({ CHECKPOINT_DISABLE: '1', PRISMA_HIDE_UPDATE_MESSAGE: '1', BROWSER: 'none', DATABASE_URL: 'file:./data/plants.db', PATH: '/usr/bin' });
  });

  it('lets Studio write only when --write asks, not because STUDIO_WRITE=1 was left in the shell', () => {
    expect(studioEnvironment({ STUDIO_WRITE: '1' }).STUDIO_WRITE).toBeUndefined();
    expect(studioEnvironment({}, { write: true }).STUDIO_WRITE).toBe('1');
  });

  it('says whether Studio reads only or writes, and what a write can do to 64-bit ids', () => {
    expect(studioReadyMessage(5555, { write: false })).toMatch(/^Prisma Studio is running at http:\/\/127\.0\.0\.1:5555\/, read-only: .*npm run studio -- --write.*docs\/commands\.md, "Prisma Studio"/);
    expect(studioReadyMessage(5555, { write: true })).toMatch(/can WRITE\. On SQLite it shows ids beyond 2\^53 rounded, and an edit or a delete of such a row changes the plant whose id is the rounded number/);
  });

  it('starts Studio on an internal port, without a browser, and with no URL in argv (prisma.config.ts gives it the database)', () => {
    for (const databaseUrl of ['file:./data/plants.db', 'file:data/plants.db', `file:${path.join(dir, 'data', 'plants.db')}`, `file://${path.join(dir, 'data', 'plants.db')}`]) {
      expect(studioArguments({ databaseUrl, internalPort: 40001, cwd: dir })).toEqual(['studio', '--browser', 'none', '--port', '40001']);
    }
  });

  it('refuses a SQLite URL that names no database file, instead of letting Studio create an empty one', () => {
    expect(() => studioArguments({ databaseUrl: 'file:./data/typo.db', internalPort: 40001, cwd: dir })).toThrow(
      `DATABASE_URL=file:./data/typo.db: there is no database at ${path.join(dir, 'data', 'typo.db')}`,
    );
    expect(() => studioArguments({ databaseUrl: 'file:./data', internalPort: 40001, cwd: dir })).toThrow('there is no database at');
    expect(fs.existsSync(path.join(dir, 'data', 'typo.db'))).toBe(false);
  });

  it('gives Prisma\'s CLI the absolute file:// URL of the file the app opens, for each of the app\'s SQLite forms', () => {
    const file = path.join(dir, 'data', 'plants.db');
    expect(prismaCliDatabaseUrl(DEFAULT_DATABASE_URL, dir)).toBe(`file://${file}`);
    for (const databaseUrl of ['file:data/plants.db', `file:${file}`, `file://${file}`]) expect(prismaCliDatabaseUrl(databaseUrl, dir)).toBe(`file://${file}`);
    // Unencoded: Studio strips `file:` and hands the rest to path.resolve, which would keep a %20.
    expect(prismaCliDatabaseUrl('file:./my plants.db', dir)).toBe(`file://${path.join(dir, 'my plants.db')}`);
    expect(prismaCliDatabaseUrl('postgresql://u:p@db/plants?schema=s', dir)).toBe('postgresql://u:p@db/plants?schema=s');
  });

  it("knows the CLI's command past its options, so only Studio is made read-only", () => {
    expect(prismaCommand(['node', 'prisma', 'studio', '--port', '5555'])).toBe('studio');
    expect(prismaCommand(['node', 'prisma', '--config', 'studio.ts', 'generate'])).toBe('generate');
    expect(prismaCommand(['node', 'prisma'])).toBeUndefined();
  });

  it('makes a PostgreSQL session read-only from its start, keeping the options the URL had', () => {
    const options = (url: string) => new URL(url).searchParams.get('options');
    expect(options(readOnlyPostgresUrl('postgresql://u:p@db:5432/plants?schema=s'))).toBe('-c default_transaction_read_only=on');
    expect(options(readOnlyPostgresUrl('postgresql://u:p@db/plants?options=-c%20search_path%3Dx'))).toBe('-c search_path=x -c default_transaction_read_only=on');
    expect(new URL(readOnlyPostgresUrl('postgresql://u:p@db:5432/plants?schema=s')).searchParams.get('schema')).toBe('s');
  });

  it('never puts a PostgreSQL URL, and so its password, in argv (prisma.config.ts reads DATABASE_URL)', () => {
    const args = studioArguments({ databaseUrl: 'postgresql://plants:hunter2@db.internal:5432/plants', internalPort: 40001 });
    expect(args).toEqual(['studio', '--browser', 'none', '--port', '40001']);
    expect(args.join(' ')).not.toContain('hunter2');
  });
});

describe('the guard in front of Studio', () => {
  const seen: http.IncomingHttpHeaders[] = [];
  const seenPaths: string[] = [];
  let studio: http.Server;
  let guard: http.Server;
  let port: number;

  beforeAll(async () => {
    // Stands in for Studio: answers every request with its path, and remembers what reached it.
    studio = http.createServer((request, response) => {
      seen.push(request.headers);
      seenPaths.push(`${request.method} ${request.url}`);
      request.resume();
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end(`studio ${request.url}`);
    });
    await new Promise<void>((resolve) => studio.listen(0, '127.0.0.1', resolve));
    // The guard must know its own port for the Host and Origin rules: take one, then listen on it.
    const probe = http.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    guard = createStudioGuard({ studioPort: (studio.address() as AddressInfo).port, port });
    await new Promise<void>((resolve) => guard.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    guard.closeAllConnections();
    studio.closeAllConnections();
    await Promise.all([new Promise((resolve) => guard.close(resolve)), new Promise((resolve) => studio.close(resolve))]);
  });

  /** One request through the guard, with the Host and headers a browser (or an attacker's page) would send. */
  const send = (method: string, target: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path: target, headers: { Host: `127.0.0.1:${port}`, ...headers } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      });
      request.once('error', reject);
      request.end(method === 'POST' ? '{}' : undefined);
    });

  it('passes the page through with a CSP that lets it connect to nothing but itself', async () => {
    const answer = await send('GET', '/');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('studio /');
    expect(answer.headers['content-security-policy']).toBe(STUDIO_CSP);
    expect(STUDIO_CSP).toContain("connect-src 'self'");
    expect(STUDIO_CSP).toContain("default-src 'self'");
    expect(answer.headers['x-frame-options']).toBe('DENY');
  });

  it("passes the page's own requests on without their Origin (Studio checks Origin against its internal port)", async () => {
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const before = seen.length;
      const answer = await send('POST', '/bff', { Origin: origin, Host: new URL(origin).host, 'Content-Type': 'application/json' });
      expect(answer.status).toBe(200);
      expect(seen.length).toBe(before + 1);
      expect(seen.at(-1)!.origin).toBeUndefined();
      expect(seen.at(-1)!.host).toBe(`127.0.0.1:${(studio.address() as AddressInfo).port}`);
    }
  });

  it('refuses another Host name (a DNS-rebinding page) and another Origin, and Studio never sees them', async () => {
    const before = seen.length;
    expect((await send('GET', '/', { Host: `attacker.example:${port}` })).status).toBe(421);
    expect((await send('POST', '/bff', { Host: `127.0.0.1.nip.io:${port}` })).status).toBe(421);
    expect((await send('POST', '/bff', { Origin: 'http://attacker.example' })).status).toBe(403);
    expect((await send('POST', '/bff', { Origin: `http://127.0.0.1:${port + 1}` })).status).toBe(403);
    expect((await send('POST', '/bff', { Origin: 'null' })).status).toBe(403);
    expect(seen.length).toBe(before);
  });

  it("answers the page's telemetry itself: it never reaches Studio, which would forward it to Prisma", async () => {
    const before = seenPaths.length;
    const answer = await send('POST', '/telemetry', { Origin: `http://127.0.0.1:${port}` });
    expect(answer.status).toBe(204);
    expect(seenPaths.length).toBe(before);
  });
});
