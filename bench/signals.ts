/**
 * `npm run bench:signals`: how fast what one instance (or the token command, or psql) changes reaches another
 * instance on one PostgreSQL database, measured on the production build: two instances per checkout.
 *
 * 1. Access: for each way access changes (revoked through instance A's procedure, revoked by the token
 *    command, an admin demoted by the token command, the user deleted in SQL, an early expiry set in SQL),
 *    the time from the change's commit (its answer, the command's exit, the statement's end) until instance B
 *    refuses the token (401, or 403 for the demoted admin's admin-only request; B polled every 5 ms), and
 *    until a live feed B holds for that token ends. ROUNDS rounds of each; a feed still open after 6 s is
 *    written as "> 6000".
 * 2. Live latency: a member's feed held on B, LIVE_CREATES creates through A's REST door, one every 40 ms;
 *    the time from the create's answer on A (its commit) until its event reaches the feed on B, p50 and p99.
 *
 * BASELINE=<folder of another checkout, built into its .test-build/> measures that commit's two instances in
 * the same run, on a database of its own, its rounds alternating with this checkout's. TEST_POSTGRES_URL names
 * a server to use; without it a private one is started. Not a test: its figures depend on the machine's load.
 */
import os from 'node:os';
import path from 'node:path';

import { ensureTestBuild, projectRoot } from '@test-support/build';
import { createPostgresDatabase, type TestDatabase } from '@test-support/database';
import { api } from '@test-support/http-client';
import { startPrivatePostgres } from '@test-support/postgres';
import { type RunningServer, startServer } from '@test-support/server-process';
import { openFeed } from '@test-support/sse-feed';
import { runCommand } from '@test-support/token-command';
import { trpcCall } from '@test-support/trpc-client';

import { percentile } from './lib/load';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const LIVE_CREATES = Number(process.env.LIVE_CREATES ?? 100);
const FEED_WAIT_MS = 6_000;
const BASELINE = process.env.BASELINE;

type Checkout = { name: string; dir: string; database: TestDatabase; a: RunningServer; b: RunningServer; nextId: bigint; users: number };

async function tokenCommand(checkout: Checkout, args: string[]): Promise<string> {
  const result = await runCommand(process.execPath, [path.join(checkout.dir, '.test-build', 'token.mjs'), ...args], { DATABASE_URL: checkout.database.url });
  if (result.code !== 0) throw new Error(`token ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

async function createToken(checkout: Checkout, role: 'admin' | 'member'): Promise<{ id: number; token: string; user: string }> {
  const user = `signals-${checkout.users++}`;
  const lines = (await tokenCommand(checkout, ['create', '--user', user, '--role', role])).trimEnd().split('\n');
  return { id: Number(/\btoken (\d+)\b/.exec(lines[0]!)![1]), token: lines.at(-1)!.trim(), user };
}

async function start(name: string, dir: string, serverUrl: string): Promise<Checkout> {
  const database = await createPostgresDatabase(serverUrl, 'plant_store_bench_');
  const a = await startServer({ database, dir, env: { LOG_LEVEL: 'warn' } });
  const b = await startServer({ database, dir, env: { LOG_LEVEL: 'warn' } });
  return { name, dir, database, a, b, nextId: 1n, users: 0 };
}

/** Polls `check` on B every 5 ms until it says refused; ms from `since`. */
async function msUntil(check: () => Promise<boolean>, since: number, capMs = 15_000): Promise<number> {
  for (;;) {
    if (await check()) return Date.now() - since;
    if (Date.now() - since > capMs) return Number.POSITIVE_INFINITY;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

type Kind = 'revoked on A' | 'revoked by the command' | 'demoted by the command' | 'user deleted in SQL' | 'expired early in SQL';
const KINDS: Kind[] = ['revoked on A', 'revoked by the command', 'demoted by the command', 'user deleted in SQL', 'expired early in SQL'];

async function accessRound(checkout: Checkout, kind: Kind): Promise<{ refusedMs: number; feedEndedMs: number }> {
  const admin = kind === 'demoted by the command';
  const target = await createToken(checkout, admin ? 'admin' : 'member');
  const onA = api(checkout.a.baseUrl, target.token);
  const onB = api(checkout.b.baseUrl, target.token);
  const probe = admin ? '/api/webhooks/endpoints' : '/api/plants?limit=1';
  // Both instances accept it now, so both have it cached.
  for (const client of [onA, onB]) if ((await client.get(probe)).status !== 200) throw new Error(`${kind}: the token is not accepted before the change`);
  const feed = openFeed(checkout.b.baseUrl, target.token);
  await feed.ready;
  let changedAt: number;
  if (kind === 'revoked on A') {
    const answer = await trpcCall(checkout.a.baseUrl, 'mutation', 'tokens.revoke', { input: { id: target.id }, token: checkout.a.adminToken });
    if (answer.status !== 200) throw new Error(`revoke answered ${answer.status}`);
    changedAt = Date.now();
  } else if (kind === 'revoked by the command') {
    await tokenCommand(checkout, ['revoke', String(target.id)]);
    changedAt = Date.now();
  } else if (kind === 'demoted by the command') {
    await tokenCommand(checkout, ['create', '--user', target.user, '--role', 'member']);
    changedAt = Date.now();
  } else if (kind === 'user deleted in SQL') {
    await checkout.database.execute('DELETE FROM "User" WHERE name = ?', [target.user]);
    changedAt = Date.now();
  } else {
    await checkout.database.execute('UPDATE "ApiToken" SET "expiresAt" = ? WHERE id = ?', [await checkout.database.dateTime(new Date(Date.now() - 1_000)), target.id]);
    changedAt = Date.now();
  }
  const refusedStatus = admin ? 403 : 401;
  const [refusedMs, feedEndedMs] = await Promise.all([
    msUntil(async () => (await onB.get(probe)).status === refusedStatus, changedAt),
    Promise.race([feed.ended.then((ending) => ending.at - changedAt), new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), FEED_WAIT_MS))]),
  ]);
  feed.close();
  return { refusedMs, feedEndedMs };
}

async function liveLatencies(checkout: Checkout): Promise<number[]> {
  const member = await createToken(checkout, 'member');
  const feed = openFeed(checkout.b.baseUrl, member.token);
  await feed.ready;
  const onA = api(checkout.a.baseUrl, member.token);
  const answeredAt = new Map<bigint, number>();
  for (let index = 0; index < LIVE_CREATES; index++) {
    const id = checkout.nextId++;
    const response = await onA.post('/api/plants', `{"id":${id},"name":"live ${id}"}`);
    if (response.status !== 200) throw new Error(`create answered ${response.status}`);
    answeredAt.set(id, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  const deadline = Date.now() + 10_000;
  while (feed.changes().length < LIVE_CREATES && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  feed.close();
  return feed.changes().map((event) => event.at - answeredAt.get((event.data as { id: bigint }).id)!);
}

const shown = (ms: number) => (Number.isFinite(ms) ? String(ms) : `> ${FEED_WAIT_MS}`);

async function main(): Promise<void> {
  ensureTestBuild();
  const own = process.env.TEST_POSTGRES_URL ? undefined : await startPrivatePostgres();
  const serverUrl = process.env.TEST_POSTGRES_URL ?? own!.url;
  console.log(`load at start: ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  const checkouts = [await start('this checkout', projectRoot, serverUrl), ...(BASELINE ? [await start(`baseline (${BASELINE})`, path.resolve(BASELINE), serverUrl)] : [])];
  try {
    const access = new Map<string, { refused: number[]; feed: number[] }>();
    const live = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const checkout of round % 2 === 0 ? checkouts : [...checkouts].reverse()) {
        for (const kind of KINDS) {
          const key = `${checkout.name}\t${kind}`;
          const figures = access.get(key) ?? { refused: [], feed: [] };
          const { refusedMs, feedEndedMs } = await accessRound(checkout, kind);
          figures.refused.push(refusedMs);
          figures.feed.push(feedEndedMs);
          access.set(key, figures);
        }
        live.set(checkout.name, [...(live.get(checkout.name) ?? []), ...(await liveLatencies(checkout))]);
      }
    }
    console.log(`\n## Access changes: ms from the commit until instance B refuses the token | until B's open feed ends (${ROUNDS} rounds)\n`);
    console.log('| checkout | change | refused on B (each round) | feed on B ended (each round) |\n|---|---|---|---|');
    for (const [key, figures] of access) {
      const [name, kind] = key.split('\t');
      console.log(`| ${name} | ${kind} | ${figures.refused.map(shown).join(', ')} | ${figures.feed.map(shown).join(', ')} |`);
    }
    console.log(`\n## Live feed across instances: ms from a create's answer on A to its event on B (${ROUNDS} × ${LIVE_CREATES} creates)\n`);
    console.log('| checkout | events | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|');
    for (const [name, values] of live) {
      const sorted = [...values].sort((x, y) => x - y);
      console.log(`| ${name} | ${values.length} | ${percentile(sorted, 0.5)} | ${percentile(sorted, 0.9)} | ${percentile(sorted, 0.99)} | ${sorted.at(-1)} |`);
    }
  } finally {
    await Promise.all(checkouts.flatMap((checkout) => [checkout.a.stop(), checkout.b.stop()]));
    await Promise.all(checkouts.map((checkout) => checkout.database.drop()));
    own?.stop();
    console.log(`\nload at end: ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
  }
}

await main();
