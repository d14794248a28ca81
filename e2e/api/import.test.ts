/**
 * CSV import over REST (docs/api.md, "CSV import"): a file in parts, its preview (created, changed, unchanged,
 * refused with the create's own error values and words), its apply in the background with progress and Stop,
 * charged per row, and what hostile files cost. Every answer is checked against the served OpenAPI document;
 * runs on both engines.
 */
import { readFileSync } from 'node:fs';

import { beforeAll, describe, expect, it } from 'vitest';

import { csvRecord } from '@/shared/csv';
import { BODY_BYTES_PER_UNIT, FIXED_COSTS, IMPORT_APPLY_ROWS_PER_UNIT, IMPORT_MAX_BYTES, IMPORT_PART_MAX_ROWS, IMPORT_PART_ROWS_PER_UNIT } from '@/shared/limits';
import { expectError, expectStatus, idSource, nextLink, plantBody, setupServer } from '@test-support/api-fixture';
import type { ApiClient, ApiResponse } from '@test-support/http-client';
import { exportHeader, exportLine } from '@test-support/plant-fields';

const nextId = idSource(7_000_000n);
const CSV = 'text/csv; charset=utf-8';

/** Cuts `text` into parts of at most `size` characters and `lines` lines, never inside a surrogate pair. */
function partsOf(text: string, size = 60_000, lines = 1_000): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    let breaks = 0;
    for (let at = start; at < end; at++) {
      if (text.charCodeAt(at) === 10 && ++breaks === lines) {
        end = at + 1;
        break;
      }
    }
    if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end -= 1;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

const imports = (client: ApiClient) => ({
  start: async (): Promise<number> => {
    const started = await client.post('/api/plants/imports', '', { contentType: null });
    expectStatus(started, 200);
    expect(started.json).toMatchObject({ state: 'receiving', parts: 0n, rows: 0n });
    return Number(started.json.id);
  },
  part: (id: number, part: number, csv: string | Uint8Array, contentType: string | null = CSV) =>
    client.request('PUT', `/api/plants/imports/${id}/parts/${part}`, { body: csv, contentType }),
  preview: (id: number) => client.post(`/api/plants/imports/${id}/preview`, '', { contentType: null }),
  get: (id: number) => client.get(`/api/plants/imports/${id}`),
  rows: (id: number, query = '') => client.get(`/api/plants/imports/${id}/rows${query}`),
  apply: (id: number) => client.post(`/api/plants/imports/${id}/apply`, '', { contentType: null }),
  stop: (id: number) => client.post(`/api/plants/imports/${id}/stop`, '', { contentType: null }),
});

/** Uploads `csv` in parts and ends the upload: the preview. */
async function uploaded(client: ApiClient, csv: string, parts = partsOf(csv)): Promise<{ id: number; preview: ApiResponse }> {
  const calls = imports(client);
  const id = await calls.start();
  for (const [index, part] of parts.entries()) expectStatus(await calls.part(id, index + 1, part), 200);
  return { id, preview: await calls.preview(id) };
}

/** Polls the import until `done(import)`, failing after `boundMs`. */
/** An answer's JSON, integers as bigint (http-client.ts). */
type Answer = ApiResponse['json'];

async function until(client: ApiClient, id: number, done: (state: Answer) => boolean, boundMs = 90_000): Promise<Answer> {
  const since = Date.now();
  for (;;) {
    const answer = await imports(client).get(id);
    expectStatus(answer, 200);
    if (done(answer.json)) return answer.json;
    expect(Date.now() - since, `import ${id} still ${JSON.stringify(answer.json, (_, value) => (typeof value === 'bigint' ? Number(value) : value))}`).toBeLessThan(boundMs);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const counts = (json: Answer) => Object.fromEntries(Object.entries(json).map(([key, value]) => [key, Number(value)]));

/** Every row of an import (following the Link header). */
async function allRows(client: ApiClient, id: number, query = '?limit=100'): Promise<Answer[]> {
  const rows: Answer[] = [];
  let next: string | undefined = `/api/plants/imports/${id}/rows${query}`;
  while (next) {
    const page = await client.get(next);
    expectStatus(page, 200);
    rows.push(...page.json);
    next = nextLink(page);
  }
  return rows;
}

describe('a CSV import', () => {
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: '100000/100000' } });
  let member: ApiClient;
  let other: ApiClient;
  let otherToken: string;
  beforeAll(async () => {
    member = server.client((await server.createToken('import-member')).token);
    otherToken = (await server.createToken('import-other')).token;
    other = server.client(otherToken);
  });

  /** The export's file, as bytes decoded (its byte order mark kept). */
  const exportOf = async (token: string, query = '') =>
    new TextDecoder('utf-8', { ignoreBOM: true }).decode(await (await fetch(`${server.baseUrl}/api/plants/export${query}`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer());

  it('previews what it will create, change, leave and refuse, each refusal as a create or patch of the row answers', async () => {
    const [mine, unchangedId, othersId, fresh, big, dupe] = [nextId(), nextId(), nextId(), nextId(), 9_007_199_254_740_993n, nextId()];
    expectStatus(await member.post('/api/plants', plantBody(mine, 'Fern', 'shade')), 200);
    expectStatus(await member.post('/api/plants', plantBody(unchangedId, 'Palm', 'tall')), 200);
    expectStatus(await other.post('/api/plants', plantBody(othersId, 'Secret orchid', 'private')), 200);
    // The export's own format: a byte order mark, CRLF, RFC 4180 quotes, an apostrophe before a formula character.
    const refusedRows: [string, string, string][] = [
      ['abc', 'Bad id', ''],
      ['9223372036854775808', 'One past int64', ''],
      [String(nextId()), '', 'no name'],
      [String(nextId()), 'x'.repeat(201), ''],
      [String(nextId()), 'Tab\there', ''],
      [String(nextId()), '\u200B\u200B', ''],
      [String(othersId), 'Taken over', ''],
      [String(dupe), 'Second with this id', ''],
    ];
    const file =
      '\uFEFF' +
      csvRecord(['id', 'name', 'tag']) +
      csvRecord([{ raw: String(fresh) }, 'Monstera, "Swiss cheese"', 'tropical']) +
      csvRecord([{ raw: String(big) }, '=HYPERLINK("http://x")', '']) +
      csvRecord([{ raw: String(mine) }, 'Boston fern', '']) +
      csvRecord([{ raw: String(unchangedId) }, 'Palm', 'tall']) +
      csvRecord([{ raw: String(dupe) }, 'First with this id', 'x']) +
      refusedRows.map(([id, name, tag]) => `${id},${name.includes('\t') ? name : csvRecord([name]).trimEnd()},${tag}\r\n`).join('');
    // Cut in the middle of records, and of the quoted field: a part is any text.
    const { id, preview } = await uploaded(member, file, [file.slice(0, 37), file.slice(37, 80), file.slice(80)]);
    expectStatus(preview, 200);
    expect(preview.json).toMatchObject({ state: 'ready', parts: 3n, rows: 13n, problem: null });
    expect(counts(preview.json.preview)).toEqual({ create: 3, change: 1, unchanged: 1, refused: 8 });

    const refused = await allRows(member, id, '?plan=refused');
    expect(refused.map((row) => Number(row.line))).toEqual([7, 8, 9, 10, 11, 12, 13, 14]);
    // Each refusal is what a create of the row answers (the same error value and the same words), whoever's id it is.
    for (const [index, row] of refused.slice(0, 6).entries()) {
      const [id, name] = refusedRows[index]!;
      const body = `{"id": ${/^-?\d+$/.test(id) ? id : JSON.stringify(id)}${name === '' ? '' : `, "name": ${JSON.stringify(name)}`}}`;
      const created = await member.post('/api/plants', body);
      expect(created.status, body).toBe(400);
      expect({ error: row.error, message: row.message }).toEqual({ error: created.json.error, message: created.json.message });
    }
    // A refused row keeps the start of each cell, enough to find it in the file.
    expect(refused[3]!.cells.name).toBe(`${'x'.repeat(100)}…`);
    const taken = await member.post('/api/plants', plantBody(othersId, 'Taken over'));
    expect({ error: refused[6]!.error, message: refused[6]!.message }).toEqual({ error: taken.json.error, message: taken.json.message });
    expect(refused[6]!.message).not.toMatch(/import-other|owner|private|Secret/);
    expect(refused[7]).toMatchObject({ error: 40006n, message: `a plant with id ${dupe} is on line 6 of this file already` });

    const all = await allRows(member, id, '?limit=3');
    expect(all.slice(0, 5).map((row) => [row.id, row.plan])).toEqual([
      [fresh, 'create'],
      [big, 'create'],
      [mine, 'change'],
      [unchangedId, 'unchanged'],
      [dupe, 'create'],
    ]);
    expect(all[0]!.cells).toEqual({ id: String(fresh), name: 'Monstera, "Swiss cheese"', tag: 'tropical' });
    expect(all[1]!.cells.name).toBe('\'=HYPERLINK("http://x")');
  });

  it('applies in the background: creates the new ids exactly, renames and re-tags, leaves the rest; applied again it creates nothing', async () => {
    const [mine, fresh] = [nextId(), nextId()];
    expectStatus(await member.post('/api/plants', plantBody(mine, 'Fern', 'shade')), 200);
    const extremes = [9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n, 9_007_199_254_740_995n];
    for (const id of extremes) await server.admin.delete(`/api/plants/${id}`);
    // LF line ends and no byte order mark: a file written by hand.
    const file = `id,name,tag\n${fresh},"'=SUM(A1)",\n${mine},Boston fern,\n${extremes.map((id) => `${id},Extreme ${id},edge`).join('\n')}\n`;
    const first = await uploaded(member, file);
    expect(counts(first.preview.json.preview)).toEqual({ create: 4, change: 1, unchanged: 0, refused: 0 });
    const started = await imports(member).apply(first.id);
    expectStatus(started, 200);
    expect(['applying', 'done']).toContain(started.json.state);
    const done = await until(member, first.id, (state) => state.state === 'done');
    expect(counts(done.applied)).toEqual({ rows: 5, created: 4, changed: 1, unchanged: 0, refused: 0 });

    const listed = await member.get(`/api/plants?after=${fresh - 1n}&limit=1`);
    expect(listed.json).toEqual([{ id: fresh, name: '=SUM(A1)' }]);
    expect((await member.get(`/api/plants?after=${mine - 1n}&limit=1`)).json).toEqual([{ id: mine, name: 'Boston fern' }]);
    const exact = await member.get('/api/plants?tag=edge');
    expect(exact.text).toBe(`[${[...extremes].sort((a, b) => (a < b ? -1 : 1)).map((id) => `{"id":${id},"name":"Extreme ${id}","tag":"edge"}`).join(',')}]`);

    const again = await uploaded(member, file);
    expect(counts(again.preview.json.preview)).toEqual({ create: 0, change: 0, unchanged: 5, refused: 0 });
    expectStatus(await imports(member).apply(again.id), 200);
    expect(counts((await until(member, again.id, (state) => state.state === 'done')).applied)).toEqual({ rows: 5, created: 0, changed: 0, unchanged: 5, refused: 0 });
    // The same import applied again once done: nothing more.
    expect((await imports(member).apply(first.id)).json).toMatchObject({ state: 'done' });
  });

  it('stops while it writes: the answer counts every row written, and nothing is written after it', async () => {
    const rows = 3_000;
    const file = `id,name\n${Array.from({ length: rows }, () => nextId()).map((id) => `${id},Interrupted ${id}`).join('\n')}\n`;
    const { id } = await uploaded(member, file);
    expectStatus(await imports(member).apply(id), 200);
    // Stopped as soon as its first slices are in, while the next are being written.
    await until(member, id, (state) => Number(state.applied.rows) > 0);
    const stopped = await imports(member).stop(id);
    expectStatus(stopped, 200);
    const appliedAtStop = Number(stopped.json.applied.rows);
    expect(appliedAtStop).toBeLessThan(rows);
    const created = async () => Number((await server.database.query<{ count: bigint }>(`SELECT COUNT(*) AS count FROM "Plant" WHERE "name" LIKE 'Interrupted %'`))[0]!.count);
    expect(await created()).toBe(appliedAtStop);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await created()).toBe(appliedAtStop);
    expect((await imports(member).get(id)).json).toMatchObject({ state: 'stopped', applied: { rows: BigInt(appliedAtStop), created: BigInt(appliedAtStop) } });
  });

  it("takes its own export back unchanged, and an admin's export with owner and created", async () => {
    const plants = [nextId(), nextId(), nextId()];
    const names = ['=cmd|"/c calc"!A0', "'@x", 'plain "quoted", text'];
    for (const [index, id] of plants.entries()) expectStatus(await other.post('/api/plants', plantBody(id, names[index]!, index === 0 ? undefined : 'tag')), 200);
    const memberFile = await exportOf(otherToken);
    expect(memberFile).toContain(`${exportLine(plants[0]!, { name: `"'=cmd|""/c calc""!A0"` })}\r\n`);
    const own = await uploaded(other, memberFile);
    expect(counts(own.preview.json.preview)).toEqual({ create: 0, change: 0, unchanged: Number(own.preview.json.rows), refused: 0 });
    const adminFile = await exportOf(server.adminToken, '?owner=import-other');
    expect(adminFile.split('\r\n')[0]).toBe(`\uFEFF${exportHeader('owner', 'created')}`);
    const { preview } = await uploaded(server.admin, adminFile);
    expect(counts(preview.json.preview)).toEqual({ create: 0, change: 0, unchanged: Number(preview.json.rows), refused: 0 });
  });
});

describe('hostile files', () => {
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: '100000/100000' } });
  let client: ApiClient;
  beforeAll(async () => {
    client = server.client((await server.createToken('import-hostile')).token);
  });

  it('refuses a 10 MB file at 8 MiB, part by part, holding no more than a part at a time', async () => {
    // Rows of 3,000 characters (names too long: refused, and kept as their first characters): 20 a part.
    const row = (index: number) => `${nextId()},${'n'.repeat(2_900)} ${index},${'t'.repeat(80)}\r\n`;
    const calls = imports(client);
    const id = await calls.start();
    const rssBefore = vmRssMb(server.pid);
    let part = 0;
    let sent = 0;
    let refusal: ApiResponse | undefined;
    while (sent < 10 * 1000 * 1000) {
      let text = part === 0 ? 'id,name,tag\r\n' : '';
      while (text.length < 60_000) text += row(sent + text.length);
      const answer = await calls.part(id, ++part, text);
      sent += text.length;
      if (answer.status !== 200) {
        refusal = answer;
        break;
      }
    }
    expect(refusal, 'the part past 8 MiB').toBeDefined();
    expectError(refusal!, 'invalidCsv', 'larger than 8 MiB');
    expect(sent).toBeGreaterThan(IMPORT_MAX_BYTES);
    expect(sent - IMPORT_MAX_BYTES).toBeLessThan(60_000);
    expect((await calls.get(id)).json).toMatchObject({ state: 'refused', problem: expect.stringContaining('8 MiB') });
    expectError(await calls.part(id, part + 1, row(0)), 'invalidCsv', '8 MiB');
    expect(vmRssMb(server.pid) - rssBefore).toBeLessThan(64);
    // In one body, it is refused before it is read.
    expectError(await calls.part(await calls.start(), 1, 'x'.repeat(10 * 1000 * 1000)), 'bodyTooLarge');
  }, 300_000);

  it('reads a million empty lines as none, and numbers the rows after them by their line', async () => {
    const file = `id,name\r\n${'\r\n'.repeat(500_000)}${nextId()},After the gap\r\n${'\n'.repeat(500_000)}`;
    const { id, preview } = await uploaded(client, file, partsOf(file, 60_000, 100_000_000));
    expect(preview.json).toMatchObject({ state: 'ready', rows: 1n });
    expect((await imports(client).rows(id)).json.map((row: { line: bigint }) => row.line)).toEqual([500_002n]);
  });

  it('refuses the row whose quote is never closed, and the whole file once such a record passes 4,096 characters', async () => {
    const short = await uploaded(client, `id,name\r\n${nextId()},Fine\r\n${nextId()},"Never closed\r\n${nextId()},swallowed\r\n`);
    expect(counts(short.preview.json.preview)).toMatchObject({ create: 1, refused: 1 });
    expect((await imports(client).rows(short.id, '?plan=refused')).json[0]).toMatchObject({ line: 3n, error: 40014n, message: 'line 3: the quote opened on line 3 is never closed' });

    const long = `id,name\r\n${nextId()},"Never closed${'\r\nmore'.repeat(2_000)}`;
    const calls = imports(client);
    const id = await calls.start();
    const answer = await calls.part(id, 1, long);
    expectError(answer, 'invalidCsv', 'longer than 4,096 characters');
    expect((await calls.get(id)).json).toMatchObject({ state: 'refused' });
    expectError(await calls.apply(id), 'invalidCsv');
  });

  it('takes CR, LF and CRLF line ends, with or without a byte order mark, and no tag column', async () => {
    const [a, b, c] = [nextId(), nextId(), nextId()];
    for (const file of [`\uFEFFid,name\r${a},CR\r${b},CR\r`, `ID , Name\n${c},LF\n`]) {
      const { preview } = await uploaded(client, file);
      expect(preview.json.preview).toMatchObject({ refused: 0n });
      expect(Number(preview.json.rows)).toBeGreaterThan(0);
    }
  });

  it('refuses, for the part alone, one that is not UTF-8 or holds too many rows; out of order or repeated parts', async () => {
    const calls = imports(client);
    const id = await calls.start();
    expectError(await calls.part(id, 1, Uint8Array.from([0x69, 0x64, 0x2c, 0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x31, 0x2c, 0xe9, 0x0a])), 'invalidCsv', 'UTF-8');
    expectError(await calls.part(id, 1, 'id,name\n', 'application/json'), 'unsupportedMediaType');
    const many = `id,name\n${Array.from({ length: IMPORT_PART_MAX_ROWS + 1 }, (_, index) => `${index},n`).join('\n')}\n`;
    expectError(await calls.part(id, 1, many), 'invalidCsv', `at most ${IMPORT_PART_MAX_ROWS.toLocaleString('en-US')}`);
    expect((await calls.get(id)).json).toMatchObject({ state: 'receiving', parts: 0n, rows: 0n });
    const first = await calls.part(id, 1, `id,name\n${nextId()},One\n`);
    expectStatus(first, 200);
    // The same part again (a retry): the same answer, nothing read twice.
    expect((await calls.part(id, 1, `id,name\n${nextId() - 1n},One\n`)).json).toMatchObject({ parts: 1n, rows: 1n });
    expectError(await calls.part(id, 3, `${nextId()},Three\n`), 'importState', 'part 2 comes next');
    expectError(await calls.part(id, 1, `id,name\n${nextId()},Other text\n`), 'importState', 'part 2 comes next');
    expectStatus(await calls.preview(id), 200);
    expectError(await calls.part(id, 2, `${nextId()},Late\n`), 'importState', 'has ended');
  });

  it('is its starter’s alone: another member, and an admin, find no such import', async () => {
    const id = await imports(client).start();
    const stranger = server.client((await server.createToken('import-stranger')).token);
    for (const asker of [stranger, server.admin]) {
      expectError(await imports(asker).get(id), 'importNotFound');
      expectError(await imports(asker).part(id, 1, 'id,name\n'), 'importNotFound');
      expectError(await imports(asker).apply(id), 'importNotFound');
    }
  });
});

describe('charges and Stop', () => {
  // A bucket that refills so slowly that what a test spends is what it has: an apply that outruns it waits mid-way.
  const BURST = 60;
  const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: `${BURST}/0.01` } });

  /** How many one-unit requests `client` still gets before a 429. */
  async function unitsLeft(client: ApiClient): Promise<number> {
    let left = 0;
    while ((await client.get('/api/plants?limit=1')).status === 200) left += 1;
    return left;
  }

  /** The import's progress as the database holds it: read without spending any token's units. */
  async function progressOf(id: number, done: (row: { state: string; applied: number }) => boolean, boundMs = 120_000) {
    const since = Date.now();
    for (;;) {
      const [row] = await server.database.query<{ state: string; applied: bigint }>(
        'SELECT "state", "created" + "changed" + "leftAsIs" + "failed" AS "applied" FROM "PlantImport" WHERE "id" = ?',
        [id],
      );
      const progress = { state: row!.state, applied: Number(row!.applied) };
      if (done(progress)) return progress;
      expect(Date.now() - since, `import ${id}: ${JSON.stringify(progress)}`).toBeLessThan(boundMs);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it(`charges a part one unit per ${IMPORT_PART_ROWS_PER_UNIT} rows and an apply one per ${IMPORT_APPLY_ROWS_PER_UNIT}, beyond each call's own`, async () => {
    const client = server.client((await server.createToken('import-charged')).token);
    const rows = 80;
    const file = `id,name\n${Array.from({ length: rows }, () => `${nextId()},Charged`).join('\n')}\n`;
    expect(Buffer.byteLength(file)).toBeLessThan(BODY_BYTES_PER_UNIT);
    const { id } = await uploaded(client, file);
    expectStatus(await imports(client).apply(id), 200);
    await progressOf(id, (progress) => progress.state === 'done');
    // start, part, preview and apply, each its call's cost; the part's rows and the apply's rows beyond.
    const spent = FIXED_COSTS.startImport + 1 + FIXED_COSTS.stepImport + FIXED_COSTS.applyImport + rows / IMPORT_PART_ROWS_PER_UNIT + rows / IMPORT_APPLY_ROWS_PER_UNIT;
    expect(await unitsLeft(client)).toBe(BURST - spent);
  });

  it('stops mid-way: the rows applied stay, nothing more is written, and an apply goes on from there, creating nothing twice', async () => {
    const applier = server.client((await server.createToken('import-stopped')).token);
    // The same user's other tokens: their buckets are their own, so one can stop while the apply waits, and go on.
    const stopper = server.client((await server.createToken('import-stopped')).token);
    // More rows than the applier's bucket pays for after the upload, fewer than the stopper's pays for after its calls.
    const rows = 150;
    const file = `id,name\n${Array.from({ length: rows }, () => nextId()).map((id) => `${id},Stopped ${id}`).join('\n')}\n`;
    const { id } = await uploaded(applier, file);
    expectStatus(await imports(applier).apply(id), 200);
    // The bucket pays for fewer rows than there are: the apply applies what it paid for, then waits for units it will not get.
    const waiting = await progressOf(id, (progress) => progress.applied > 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stopped = await imports(stopper).stop(id);
    expectStatus(stopped, 200);
    expect(stopped.json.state).toBe('stopped');
    const appliedAtStop = Number(stopped.json.applied.rows);
    expect(appliedAtStop).toBeGreaterThanOrEqual(waiting.applied);
    expect(appliedAtStop).toBeLessThan(rows);
    const created = async () => Number((await server.database.query<{ count: bigint }>(`SELECT COUNT(*) AS count FROM "Plant" WHERE "name" LIKE 'Stopped %'`))[0]!.count);
    expect(await created()).toBe(appliedAtStop);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await created()).toBe(appliedAtStop);
    expect((await imports(stopper).get(id)).json).toMatchObject({ state: 'stopped', applied: { rows: BigInt(appliedAtStop) } });

    // An apply with a bucket of its own goes on from where the first stopped.
    expectStatus(await imports(stopper).apply(id), 200);
    await progressOf(id, (progress) => progress.state === 'done');
    expect(counts((await imports(stopper).get(id)).json.applied)).toEqual({ rows, created: rows, changed: 0, unchanged: 0, refused: 0 });
    expect(await created()).toBe(rows);
  });
});

function vmRssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}
