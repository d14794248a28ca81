/**
 * Conditional lists (docs/api.md, "Conditional lists"): `GET /api/plants` carries a strong ETag, and a poll with
 * `If-None-Match` is answered 304 while nothing the caller can see has changed. Two instances on one
 * database (on SQLite two processes on one file, on PostgreSQL the scale-out setup): a change made through
 * either, by any token, reaches the other's ETags, since the versions live in the database: on SQLite at the
 * next request (each reads the file's data_version), on PostgreSQL once the commit's notification is heard
 * (milliseconds; docs/scaling.md, "Instances hear each other").
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkedClient, expectError, expectStatus, plantBody } from '@test-support/api-fixture';
import { createTestDatabase, type TestDatabase, testEngine } from '@test-support/database';
import { api, type ApiClient, type ApiResponse } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

/** A list of up to 1,000 costs 10 units (docs/api.md, "Rate limits"); the burst is sized against that below. */
const BURST = 60;

let database: TestDatabase;
let first: RunningServer;
let second: RunningServer;
let adminToken: string;

beforeAll(async () => {
  database = await createTestDatabase();
  // One after the other: the first creates the admin and prints its token.
  first = await startServer({ database, env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });
  second = await startServer({ database, env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });
  adminToken = first.adminToken;
}, 180_000);

afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
  await database?.drop();
});

const etagOf = (response: ApiResponse) => {
  expectStatus(response, 200);
  const etag = response.headers.get('etag');
  expect(etag).toMatch(/^"[\w-]{27}"$/);
  return etag!;
};

/** Whether the list at `path` is still one `ifNoneMatch` names: 304 (with its ETag and no body) or 200. */
async function unchanged(client: ApiClient, path: string, ifNoneMatch: string, etag = ifNoneMatch): Promise<boolean> {
  const response = await client.get(path, { headers: { 'If-None-Match': ifNoneMatch } });
  if (response.status === 304) {
    expect(response.headers.get('etag')).toBe(etag);
    expect(response.text).toBe('');
    return true;
  }
  expectStatus(response, 200);
  return false;
}

/**
 * What `ask` answers once a change committed elsewhere is seen: the first answer on SQLite; on PostgreSQL asked
 * again while `stale` holds, for up to a second, since an instance hears another's commit by its notification.
 */
async function onceSeen(ask: () => Promise<ApiResponse>, stale: (response: ApiResponse) => boolean): Promise<ApiResponse> {
  const end = Date.now() + (testEngine === 'postgresql' ? 1_000 : 0);
  for (;;) {
    const response = await ask();
    if (!stale(response) || Date.now() >= end) return response;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const notModified = (response: ApiResponse) => response.status === 304;

/** Whether a change made through the other instance is seen: a 200, not the 304 `etag` would get. */
const seesChange = async (client: ApiClient, path: string, etag: string) => (await onceSeen(() => client.get(path, { headers: { 'If-None-Match': etag } }), notModified)).status === 200;

describe('conditional plant lists', () => {
  it('answers an If-None-Match that still holds with a 304, on either instance, and a changed one with the new list', async () => {
    const member = await first.createToken('conditional-member', 'member');
    const onFirst = await checkedClient(first, member.token);
    const onSecond = await checkedClient(second, member.token);
    expectStatus(await onFirst.post('/api/plants', plantBody(31_001n, 'Monstera', 'tropical')), 200);

    const listed = await onFirst.get('/api/plants');
    const etag = etagOf(listed);
    expect(await unchanged(onFirst, '/api/plants', etag)).toBe(true);
    // The ETag is computed from data in the database: the other instance gives the same one.
    expect(await unchanged(onSecond, '/api/plants', etag)).toBe(true);
    expect(etagOf(await onSecond.get('/api/plants'))).toBe(etag);
    // A weak comparison (RFC 9110, 13.1.2), one of several, and a list of others that does not name it.
    expect(await unchanged(onFirst, '/api/plants', `"other", W/${etag}`, etag)).toBe(true);
    expect(await unchanged(onFirst, '/api/plants', '"other", W/"another"')).toBe(false);
    // Another query is another answer: another ETag.
    const limited = etagOf(await onFirst.get('/api/plants?limit=1'));
    expect(limited).not.toBe(etag);
    expect(await unchanged(onFirst, '/api/plants', limited)).toBe(false);

    // A create on the other instance is seen on this one.
    expectStatus(await onSecond.post('/api/plants', plantBody(31_002n, 'Ficus')), 200);
    const afterCreate = await onceSeen(() => onFirst.get('/api/plants', { headers: { 'If-None-Match': etag } }), notModified);
    expectStatus(afterCreate, 200);
    expect(afterCreate.json).toEqual([
      { id: 31_001n, name: 'Monstera', tag: 'tropical' },
      { id: 31_002n, name: 'Ficus' },
    ]);
    expect(etagOf(afterCreate)).not.toBe(etag);
  });

  it('gives a 304 the headers its 200 carries: the same Link to the next page and Cache-Control private, no-cache, on either instance', async () => {
    const member = await first.createToken('conditional-pager', 'member');
    const onFirst = await checkedClient(first, member.token);
    const onSecond = await checkedClient(second, member.token);
    for (const id of [34_001n, 34_002n, 34_003n]) expectStatus(await onFirst.post('/api/plants', plantBody(id, `Pager ${id}`)), 200);

    const page = await onFirst.get('/api/plants?limit=2');
    const etag = etagOf(page);
    const link = page.headers.get('link');
    expect(link).toContain('after=34002');
    expect(page.headers.get('cache-control')).toBe('private, no-cache');
    // On the instance that answered the 200, and on the other (which has to read the page for its Link).
    for (const client of [onFirst, onSecond]) {
      const again = await client.get('/api/plants?limit=2', { headers: { 'If-None-Match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('link')).toBe(link);
      expect(again.headers.get('cache-control')).toBe('private, no-cache');
    }
    // The last page has no next one, and neither has its 304.
    const whole = await onFirst.get('/api/plants?limit=1000');
    expect(whole.headers.get('link')).toBeNull();
    const wholeAgain = await onSecond.get('/api/plants?limit=1000', { headers: { 'If-None-Match': etagOf(whole) } });
    expect(wholeAgain.status).toBe(304);
    expect(wholeAgain.headers.get('link')).toBeNull();
  });

  it('sees a change made by another token: a second token of the member, and an admin', async () => {
    const member = await first.createToken('conditional-owner', 'member');
    const otherToken = await first.createToken('conditional-owner', 'member');
    const client = await checkedClient(first, member.token);
    const sameUser = await checkedClient(second, otherToken.token);
    const admin = await checkedClient(second, adminToken);
    expectStatus(await client.post('/api/plants', plantBody(32_001n, 'Pilea', 'small')), 200);

    let etag = etagOf(await client.get('/api/plants'));
    expectStatus(await sameUser.post('/api/plants', plantBody(32_002n, 'Hoya')), 200);
    expect(await seesChange(client, '/api/plants', etag)).toBe(true);

    etag = etagOf(await client.get('/api/plants'));
    const renamed = await admin.request('PATCH', '/api/plants/32001', { body: '{"name": "Pilea peperomioides"}' });
    expectStatus(renamed, 200);
    expect(await seesChange(client, '/api/plants', etag)).toBe(true);

    etag = etagOf(await client.get('/api/plants'));
    // A patch that changes nothing changes no list.
    expectStatus(await admin.request('PATCH', '/api/plants/32001', { body: '{"tag": "small"}' }), 200);
    expect(await unchanged(client, '/api/plants', etag)).toBe(true);
    expectStatus(await admin.delete('/api/plants/32002'), 204);
    expect(await seesChange(client, '/api/plants', etag)).toBe(true);
  });

  it("keeps a member's 304 through other owners' changes, and an admin's list sees every owner's", async () => {
    const watcher = await checkedClient(first, (await first.createToken('conditional-watcher', 'member')).token);
    const neighbour = await checkedClient(second, (await first.createToken('conditional-neighbour', 'member')).token);
    const admin = await checkedClient(first, adminToken);
    expectStatus(await watcher.post('/api/plants', plantBody(33_001n, 'Aloe')), 200);

    const memberEtag = etagOf(await watcher.get('/api/plants'));
    const adminEtag = etagOf(await admin.get('/api/plants?limit=1000'));
    expectStatus(await neighbour.post('/api/plants', plantBody(33_002n, 'Cactus')), 200);
    // The member cannot see the neighbour's plants: their list did not change.
    expect(await unchanged(watcher, '/api/plants', memberEtag)).toBe(true);
    // The admin sees all plants: theirs did.
    expect(await seesChange(admin, '/api/plants?limit=1000', adminEtag)).toBe(true);
    // The same query by a member and by an admin are different answers with different ETags.
    expect(etagOf(await admin.get('/api/plants'))).not.toBe(memberEtag);
  });

  // A plain 200 (no If-None-Match) takes its version another way than a poll: on PostgreSQL, in the statement of
  // the list's rows; a poll reads it first (plants/versions.ts). Both must name the same version alike.
  it('gives a plain 200 the ETag its poll is answered 304 for: no plant yet, a page, the last page, an empty one, a search, an admin\'s', async () => {
    const member = await first.createToken('conditional-plain', 'member');
    const onFirst = await checkedClient(first, member.token);
    // The same member through another token: on PostgreSQL a token's budget is one across the instances, and these polls would spend it twice.
    const onSecond = await checkedClient(second, (await first.createToken('conditional-plain', 'member')).token);
    const admin = await checkedClient(second, adminToken);
    // Another member's plant: the store's versions are not all this member's.
    const neighbour = await checkedClient(first, (await first.createToken('conditional-plain-other', 'member')).token);
    expectStatus(await neighbour.post('/api/plants', plantBody(37_101n, 'Fern elsewhere', 'shade')), 200);
    const paths = ['/api/plants', '/api/plants?limit=1', '/api/plants?q=fern', '/api/plants?tag=shade&limit=5', '/api/plants?after=37002'];
    const pollsMatch = async (client: ApiClient, path: string) => {
      const etag = etagOf(await client.get(path));
      for (const poller of client === admin ? [admin] : [onFirst, onSecond]) expect(await unchanged(poller, path, etag)).toBe(true);
    };
    for (const path of paths) await pollsMatch(onFirst, path);
    for (const id of [37_001n, 37_002n]) expectStatus(await onFirst.post('/api/plants', plantBody(id, `Fern ${id}`, 'shade')), 200);
    for (const path of paths) await pollsMatch(onFirst, path);
    for (const path of ['/api/plants?limit=1000', '/api/plants?owner=conditional-plain', '/api/plants?owner=conditional-plain&after=37001']) await pollsMatch(admin, path);
  });

  it("keeps a member's plain 200 ETag through another member's writes, and changes it with each of their own", async () => {
    const watcher = await checkedClient(first, (await first.createToken('conditional-plain-watcher', 'member')).token);
    const watcherElsewhere = await checkedClient(second, (await first.createToken('conditional-plain-watcher', 'member')).token);
    const neighbour = await checkedClient(second, (await first.createToken('conditional-plain-neighbour', 'member')).token);
    expectStatus(await watcher.post('/api/plants', plantBody(38_001n, 'Begonia')), 200);
    const plain = async () => {
      const [here, there] = [etagOf(await watcher.get('/api/plants')), etagOf(await watcherElsewhere.get('/api/plants'))];
      expect(there).toBe(here);
      return here;
    };
    let etag = await plain();
    expectStatus(await neighbour.post('/api/plants', plantBody(38_002n, 'Cactus')), 200);
    expectStatus(await neighbour.request('PATCH', '/api/plants/38002', { body: '{"name": "Cactus II"}' }), 200);
    expectStatus(await neighbour.delete('/api/plants/38002'), 204);
    expect(await plain()).toBe(etag);

    for (const write of [
      () => watcher.post('/api/plants', plantBody(38_003n, 'Oxalis')),
      () => watcherElsewhere.request('PATCH', '/api/plants/38003', { body: '{"tag": "purple"}' }),
      () => watcher.delete('/api/plants/38003'),
    ]) {
      expect((await write()).status).toBeLessThan(300);
      const next = await plain();
      expect(next).not.toBe(etag);
      etag = next;
    }
  });

  it('charges a 304 the one unit every request pays, not the rows it did not read', async () => {
    const client = await checkedClient(first, (await first.createToken('conditional-poller', 'member')).token);
    // limit=1000 costs 10 units: a sixth of the burst per full list.
    const etag = etagOf(await client.get('/api/plants?limit=1000'));
    // Forty-five polls at full price would be 450 units; as 304s they are 45, within the 50 left; the next full list is not.
    for (let poll = 0; poll < 45; poll++) expect(await unchanged(client, '/api/plants?limit=1000', etag)).toBe(true);
    expectError(await client.get('/api/plants?limit=1000'), 'tooManyRequests');
  });

  it('charges a plain list answered again from memory what its first answer cost', async () => {
    const client = await checkedClient(first, (await first.createToken('conditional-repeater', 'member')).token);
    // Six lists of 1,000 at 10 units each take the burst of 60, however they are answered; the seventh is refused.
    const lists = [];
    for (let list = 0; list < 6; list++) lists.push(await client.get('/api/plants?limit=1000'));
    for (const list of lists) expect(etagOf(list)).toBe(etagOf(lists[0]!));
    expectError(await client.get('/api/plants?limit=1000'), 'tooManyRequests');
  });

  it('refuses a plain list answered from memory past its units as the list itself refuses it', async () => {
    const client = await checkedClient(first, (await first.createToken('conditional-refused-kept', 'member')).token);
    // 50 units in five lists, 5 in 304s: the door's unit of one more list fits (56), its rows' 9 do not.
    const etag = etagOf(await client.get('/api/plants?limit=1000'));
    for (let list = 0; list < 4; list++) expect(etagOf(await client.get('/api/plants?limit=1000'))).toBe(etag);
    for (let poll = 0; poll < 5; poll++) expect(await unchanged(client, '/api/plants?limit=1000', etag)).toBe(true);
    // On SQLite this one is the kept answer's refusal; the next, a list never answered, is the procedure's (57).
    const kept = await client.get('/api/plants?limit=1000');
    const listed = await client.get('/api/plants?limit=999');
    for (const refused of [kept, listed]) expectError(refused, 'tooManyRequests');
    const rateHeaders = (response: ApiResponse) =>
      [...response.headers.keys()].filter((name) => /^(retry-after|ratelimit)/.test(name)).sort();
    expect(rateHeaders(kept)).toEqual(rateHeaders(listed));
    expect(rateHeaders(kept)).toContain('retry-after');
    // The same words; the wait they name follows the bucket's level, one unit apart here.
    expect(kept.json.message.replace(/\d+/g, 'N')).toBe(listed.json.message.replace(/\d+/g, 'N'));
  });

  it('answers If-None-Match: * with a 304 and the headers its 200 carries, alone or among tags, asked before or not, on either instance', async () => {
    const member = await first.createToken('conditional-any', 'member');
    const onFirst = await checkedClient(first, member.token);
    const onSecond = await checkedClient(second, member.token);
    // No plant yet: an empty list is a current answer too (RFC 9110, 13.1.2: "*" matches any).
    const empty = await onSecond.get('/api/plants', { headers: { 'If-None-Match': '*' } });
    expect(empty.status).toBe(304);
    expect(empty.headers.get('etag')).toMatch(/^"[\w-]{27}"$/);
    for (const id of [39_001n, 39_002n, 39_003n]) expectStatus(await onFirst.post('/api/plants', plantBody(id, `Any ${id}`)), 200);

    // A query no instance has answered yet, then one the first has: the procedure's 200 and the kept one.
    for (const [client, header] of [
      [onSecond, '*'],
      [onFirst, '*'],
      [onFirst, '"other", *'],
      [onSecond, ' W/"other" ,* '],
    ] as const) {
      const polled = await client.get('/api/plants?limit=2', { headers: { 'If-None-Match': header } });
      expect(polled.status, header).toBe(304);
      expect(polled.text).toBe('');
      const page = await client.get('/api/plants?limit=2');
      expect(polled.headers.get('etag')).toBe(etagOf(page));
      expect(polled.headers.get('link')).toBe(page.headers.get('link'));
      expect(polled.headers.get('link')).toContain('after=39002');
      expect(polled.headers.get('cache-control')).toBe('private, no-cache');
    }
    // A list that is not one: a member's refusal below, and a malformed header is no match.
    expect(await unchanged(onFirst, '/api/plants?limit=2', 'junk, *')).toBe(false);
  });

  it('refuses what the list refuses, whatever If-None-Match says', async () => {
    const client = await checkedClient(first, (await first.createToken('conditional-refused', 'member')).token);
    // Asked twice, so that the first answer would be kept if it were one.
    for (let ask = 0; ask < 2; ask++) {
      expectError(await client.get('/api/plants?owner=admin', { headers: { 'If-None-Match': '*' } }), 'ownerFilterForAdmins');
      expectError(await client.get('/api/plants?limit=0', { headers: { 'If-None-Match': '*' } }), 'invalidQueryParameter');
    }
    const anonymous = await checkedClient(first, null);
    expectError(await anonymous.get('/api/plants', { headers: { 'If-None-Match': '*' } }), 'missingToken');
  });

  it('sees a change committed behind every server\'s back, by a program that is no server, on both instances', async () => {
    const member = await first.createToken('conditional-elsewhere', 'member');
    const onFirst = await checkedClient(first, member.token);
    const onSecond = await checkedClient(second, member.token);
    expectStatus(await onFirst.post('/api/plants', plantBody(35_001n, 'Calathea')), 200);
    const etag = etagOf(await onFirst.get('/api/plants'));
    // Both instances have answered this version (on SQLite each keeps it in memory, plants/version-watch.ts).
    for (const client of [onFirst, onSecond]) expect(await unchanged(client, '/api/plants', etag)).toBe(true);

    // This test's own connection is another process to both servers: no server hears of the change.
    expect(await database.execute('UPDATE "Plant" SET "name" = ? WHERE "id" = ?', ['Calathea orbifolia', 35_001n])).toBe(1);
    for (const client of [onFirst, onSecond]) {
      const after = await onceSeen(() => client.get('/api/plants', { headers: { 'If-None-Match': etag } }), notModified);
      expectStatus(after, 200);
      expect(after.json).toEqual([{ id: 35_001n, name: 'Calathea orbifolia' }]);
    }
    // A write elsewhere that no list shows (another table) keeps the new 304s, though every version kept was dropped.
    const renamed = etagOf(await onFirst.get('/api/plants'));
    await database.execute('UPDATE "User" SET "name" = "name" WHERE "name" = ?', ['conditional-elsewhere']);
    for (const client of [onFirst, onSecond]) expect(await unchanged(client, '/api/plants', renamed)).toBe(true);

    // A new id is a change too (no API call makes one), seen by a plain list answered before on both instances.
    for (const client of [onFirst, onSecond]) expect(etagOf(await client.get('/api/plants'))).toBe(renamed);
    expect(await database.execute('UPDATE "Plant" SET "id" = ? WHERE "id" = ?', [35_002n, 35_001n])).toBe(1);
    for (const client of [onFirst, onSecond]) {
      const after = await onceSeen(() => client.get('/api/plants'), (response) => response.headers.get('etag') === renamed);
      expect(etagOf(after)).not.toBe(renamed);
      expect(after.json).toEqual([{ id: 35_002n, name: 'Calathea orbifolia' }]);
    }
    // An update that changes nothing bumps nothing; a tag where there was none is a change.
    const moved = etagOf(await onFirst.get('/api/plants'));
    expect(await database.execute('UPDATE "Plant" SET "name" = "name", "tag" = "tag" WHERE "id" = ?', [35_002n])).toBe(1);
    for (const client of [onFirst, onSecond]) expect(await unchanged(client, '/api/plants', moved)).toBe(true);
    expect(await database.execute('UPDATE "Plant" SET "tag" = ? WHERE "id" = ?', ['shade', 35_002n])).toBe(1);
    for (const client of [onFirst, onSecond]) {
      const after = await onceSeen(() => client.get('/api/plants'), (response) => response.headers.get('etag') === moved);
      expect(etagOf(after)).not.toBe(moved);
      expect(after.json).toEqual([{ id: 35_002n, name: 'Calathea orbifolia', tag: 'shade' }]);
    }
  });

  // On SQLite a 304 is answered from the versions the process keeps, and a plain list asked again from the
  // answer kept under its ETag (http/rest/kept-answers.ts): no statement reaches the database.
  it.runIf(testEngine === 'sqlite')('answers a 304, and a plain list asked again, on SQLite without a statement to the database', async () => {
    const metricsToken = randomBytes(32).toString('hex');
    // A token cache longer than the test: a token re-read would be a statement too.
    const watched = await startServer({ database, env: { METRICS: 'on', METRICS_TOKEN: metricsToken, AUTH_CACHE_TTL_MS: '600000', RATE_LIMIT_PER_TOKEN: 'off' } });
    try {
      const client = await checkedClient(watched, (await watched.createToken('conditional-quiet', 'member')).token);
      expectStatus(await client.post('/api/plants', plantBody(36_001n, 'Peperomia')), 200);
      const etag = etagOf(await client.get('/api/plants?limit=5'));
      const queries = async () => {
        const scrape = await api(watched.baseUrl, metricsToken).get('/api/metrics');
        expectStatus(scrape, 200);
        return Number(/^plantstore_db_statement_duration_seconds_count\{kind="query"\} (\d+)$/m.exec(scrape.text)?.[1]);
      };
      // What a scrape itself reads (the webhook queue's figures), measured the same way, then 20 polls between two scrapes.
      const [before, between] = [await queries(), await queries()];
      for (let poll = 0; poll < 20; poll++) expect(await unchanged(client, '/api/plants?limit=5', etag)).toBe(true);
      const after = await queries();
      expect(after - between).toBe(between - before);

      // A plain list: its first two answers run the query (the second keeps its body), the next ones are the same
      // bytes and headers without one.
      expectStatus(await client.post('/api/plants', plantBody(36_002n, 'Pilea', 'shade')), 200);
      const answered = await client.get('/api/plants?limit=1');
      expectStatus(answered, 200);
      expect((await client.get('/api/plants?limit=1')).text).toBe(answered.text);
      const [again, since] = [await queries(), await queries()];
      for (let poll = 0; poll < 20; poll++) {
        const repeated = await client.get('/api/plants?limit=1');
        expectStatus(repeated, 200);
        expect(repeated.text).toBe(answered.text);
        for (const header of ['etag', 'link', 'cache-control', 'content-type', 'content-length']) expect(repeated.headers.get(header)).toBe(answered.headers.get(header));
        expect(repeated.headers.get('x-request-id')).not.toBe(answered.headers.get('x-request-id'));
      }
      // HEAD: the same headers, no body.
      const head = await client.request('HEAD', '/api/plants?limit=1');
      expectStatus(head, 200);
      expect(head.text).toBe('');
      for (const header of ['etag', 'link', 'content-length']) expect(head.headers.get(header)).toBe(answered.headers.get(header));
      expect((await queries()) - since).toBe(since - again);
      expect(answered.headers.get('link')).toContain('after=36001');
      // A change is seen at once: the next list runs the query again and shows it.
      expect(await database.execute('UPDATE "Plant" SET "name" = ? WHERE "id" = ?', ['Peperomia obtusifolia', 36_001n])).toBe(1);
      const changed = await client.get('/api/plants?limit=1');
      expectStatus(changed, 200);
      expect(changed.json).toEqual([{ id: 36_001n, name: 'Peperomia obtusifolia' }]);
      expect(changed.headers.get('etag')).not.toBe(answered.headers.get('etag'));
    } finally {
      await watched.stop();
    }
  });
});
