/**
 * The token command (`npm run --silent token -- create|list|revoke`) and what the server prints on its
 * first start.
 */
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { testBuildDir } from '@test-support/build';
import { createTestDatabase, type TestDatabase } from '@test-support/database';
import { type RunningServer, startServer } from '@test-support/server-process';
import { type CliResult, runCommand, runTokenCli } from '@test-support/token-command';

import { checkedClient, expectStatus, msUntilRefused, plantBody, setupServer } from '@test-support/api-fixture';

/** How soon a change of access made by another process is honoured (docs/scaling.md). */
const ACCESS_CHANGE_BOUND_MS = 1_000;

const TOKEN = /^pst_[A-Za-z0-9_-]{43}$/;


describe('token command', () => {
  const server = setupServer();
  const cli = (...args: string[]) => runTokenCli(server.databaseUrl, args);
  const lastLine = (result: CliResult) => result.stdout.trimEnd().split('\n').at(-1)!.trim();

  describe('create', () => {
    let result: CliResult;
    beforeAll(async () => {
      result = await cli('create', '--user', 'carol');
    });

    it('exits 0 and prints the token alone on the last line of stdout', () => {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(TOKEN);
    });

    it('prints a token of the form pst_ + 43 base64url characters (256 random bits)', () => {
      expect(lastLine(result)).toMatch(TOKEN);
    });

    it('prints the token once', () => {
      expect(result.stdout.split(lastLine(result)).length - 1).toBe(1);
      expect(result.stderr).not.toContain(lastLine(result));
    });

    it('issues a token that works on the API', async () => {
      expectStatus(await server.client(lastLine(result)).get('/api/plants'), 200);
    });

    it('makes a member by default (sees only their own plants)', async () => {
      expectStatus(await server.admin.post('/api/plants', plantBody(1, 'admin only')), 200);
      const response = await server.client(lastLine(result)).get('/api/plants');
      expect(response.json).toEqual([]);
    });

    it('issues different tokens each time, also for the same user', async () => {
      const again = await cli('create', '--user', 'carol');
      expect(again.code).toBe(0);
      expect(lastLine(again)).toMatch(TOKEN);
      expect(lastLine(again)).not.toBe(lastLine(result));
      expectStatus(await server.client(lastLine(result)).get('/api/plants'), 200);
      expectStatus(await server.client(lastLine(again)).get('/api/plants'), 200);
    });

    it('makes an admin with --role admin (sees every plant)', async () => {
      expectStatus(await server.admin.post('/api/plants', plantBody(2, 'also admin only')), 200);
      const admin = await cli('create', '--user', 'dave', '--role', 'admin');
      expect(admin.code, admin.stderr).toBe(0);
      const ids = (await server.client(lastLine(admin)).get('/api/plants')).json.map((plant: { id: bigint }) => plant.id);
      expect(ids).toEqual(expect.arrayContaining([1n, 2n]));
    });

    it('stores only a hash: the token appears nowhere in the database', async () => {
      const tables = await server.database.tables();
      expect(tables).toContain('ApiToken');
      for (const name of tables) {
        const rows = await server.database.query(`SELECT * FROM "${name.replace(/"/g, '""')}"`);
        const text = JSON.stringify(rows, (_, value) => (typeof value === 'bigint' ? String(value) : value));
        expect(text, `table ${name}`).not.toContain(lastLine(result));
        expect(text, `table ${name}`).not.toContain(lastLine(result).slice(4));
      }
    });

    it('is what `npm run --silent token -- create` prints too (token alone on the last line)', async () => {
      const npm = await runCommand('npm', ['run', '--silent', 'token', '--', 'create', '--user', 'npm-user'], {
        DATABASE_URL: server.databaseUrl,
      });
      expect(npm.code, npm.stderr).toBe(0);
      expect(npm.stdout.trimEnd().split('\n').at(-1)).toMatch(TOKEN);
      expectStatus(await server.client(lastLine(npm)).get('/api/plants'), 200);
    });
  });

  describe('list and revoke', () => {
    let issued: { id: string; token: string };
    let listed: CliResult;

    beforeAll(async () => {
      const created = await cli('create', '--user', 'erin');
      expect(created.code, created.stderr).toBe(0);
      const id = /\btoken (\d+)\b/.exec(created.stdout.split('\n')[0]!)?.[1];
      expect(id, `a token id in the first line of: ${created.stdout}`).toBeDefined();
      issued = { id: id!, token: lastLine(created) };
      listed = await cli('list');
    });

    it('list exits 0 and shows the token by its id and its user', () => {
      expect(listed.code, listed.stderr).toBe(0);
      const row = listed.stdout.split('\n').find((line) => line.split(/\s+/)[0] === issued.id);
      expect(row, `a row for token ${issued.id} in:\n${listed.stdout}`).toBeDefined();
      expect(row).toContain('erin');
    });

    it('list never shows a full token', () => {
      expect(listed.stdout).not.toContain(issued.token);
      expect(listed.stdout).not.toContain(issued.token.slice(4));
      expect(listed.stdout).not.toContain(server.adminToken);
      expect(listed.stdout).not.toMatch(/pst_[A-Za-z0-9_-]{43}/);
    });

    it('list shows a recognizable prefix of the token (pst_…)', () => {
      const row = listed.stdout.split('\n').find((line) => line.split(/\s+/)[0] === issued.id)!;
      expect(row).toContain('pst_');
    });

    it('revoke <id> exits 0, and the token gets 401, error 40101 within a second', async () => {
      expectStatus(await server.client(issued.token).get('/api/plants'), 200);
      const revoked = await cli('revoke', issued.id);
      const revokedAt = Date.now();
      expect(revoked.code, revoked.stderr).toBe(0);
      // The command is another process: the server hears of the revoke (the file's data_version, or NOTIFY) and drops what it cached.
      await msUntilRefused(server.client(issued.token), revokedAt, ACCESS_CHANGE_BOUND_MS);
    });

    it('list shows the revoked token as revoked', async () => {
      const after = await cli('list');
      const row = after.stdout.split('\n').find((line) => line.split(/\s+/)[0] === issued.id);
      expect(row).toMatch(/revoked/i);
    });

    it('revoke of a token id that does not exist fails (non-zero exit)', async () => {
      const result = await cli('revoke', '999999');
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().length).toBeGreaterThan(0);
    });
  });

  describe('usage errors exit 2 with the usage on stderr', () => {
    it.each([
      ['no command', []],
      ['an unknown command', ['frobnicate']],
      ['create without --user', ['create']],
      ['create with an empty --user', ['create', '--user', '']],
      ['create with an unknown role', ['create', '--user', 'x', '--role', 'king']],
      ['create with an unknown option', ['create', '--user', 'x', '--bogus']],
      ['revoke without an id', ['revoke']],
      ['revoke with a non-numeric id', ['revoke', 'abc']],
      ['list with an extra argument', ['list', 'extra']],
    ])('%s', async (_, args) => {
      const result = await cli(...args);
      expect(result.code, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(/usage/i);
      expect(result.stdout).not.toMatch(/pst_/);
    });
  });
});

/** How long a server given SIGTERM may take to drain and exit: a bound against a hang, on a busy machine. */
const SIGTERM_EXIT_MS = 30_000;

describe('first start and restart', () => {
  let database: TestDatabase;
  let first: RunningServer | undefined;
  let second: RunningServer | undefined;
  let firstToken: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    first = await startServer({ database });
    firstToken = first.adminToken;
  });

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await database.drop();
  });

  it('prints one admin token on the first start, with the URL to sign in at', () => {
    expect(firstToken).toMatch(TOKEN);
    const stdout = first!.stdout();
    expect(stdout.split('\n').filter((line) => TOKEN.test(line.trim()))).toHaveLength(1);
    expect(stdout).toMatch(/https?:\/\/[^\s]+/);
    expect(stdout).toMatch(/admin/);
  });

  it("issues a first token that is an admin token (it sees a member's plant)", async () => {
    const member = await first!.createToken('restart-member', 'member');
    expectStatus(await (await checkedClient(first!, member.token)).post('/api/plants', plantBody(1, 'member plant')), 200);
    const response = await (await checkedClient(first!, firstToken)).get('/api/plants');
    expectStatus(response, 200);
    expect(response.json.map((plant: { id: bigint }) => plant.id)).toContain(1n);
  });

  it('stops on SIGTERM, by itself: it drains and exits 0', async () => {
    // The signal is sent here, not through stop(), which would fall back to SIGKILL and pass either way.
    first!.kill('SIGTERM');
    const timedOut = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), SIGTERM_EXIT_MS).unref());
    // Exit code 0, not the signal: the server's own handler ended it (without one, Node dies of the signal).
    expect(await Promise.race([first!.exit, timedOut])).toEqual({ code: 0, signal: null });
  });

  it('prints no new token when it starts again on the same database, and the first token still works', async () => {
    second = await startServer({ database });
    expect(second.stdout()).not.toMatch(/pst_[A-Za-z0-9_-]{43}/);
    expectStatus(await (await checkedClient(second, firstToken)).get('/api/plants'), 200);
  });
});

describe('a bad environment', () => {
  it('stops the server before it does anything, naming the variable and what it takes', async () => {
    const result = await runCommand(process.execPath, [path.join(testBuildDir, 'server.mjs')], { PORT: 'eighty', RATE_LIMIT_PER_TOKEN: 'many', DATABASE_URL: 'file:/nonexistent/never.db' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Plant Store cannot start: the environment is not valid');
    expect(result.stderr).toContain('PORT="eighty": PORT is a whole number from 0 to 65535');
    expect(result.stderr).toContain('RATE_LIMIT_PER_TOKEN="many": RATE_LIMIT_PER_TOKEN is BURST/PER_SECOND');
    expect(result.stderr).not.toMatch(/\n[ \t]+at /);
  });

  it('stops the token command the same way, without echoing a database URL', async () => {
    const result = await runTokenCli('mysql://root:hunter2@db/plants', ['list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL starts with file: (SQLite) or postgresql:// (PostgreSQL)');
    expect(result.stderr).not.toContain('hunter2');
  });
});
