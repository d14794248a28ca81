/**
 * GET /api/plants/export: the list's plants as one CSV file, streamed. Checked against the served OpenAPI
 * document like every other answer (the CSV body as text/csv, failures as the contract's Error).
 */
import { describe, expect, it } from 'vitest';

import { expectStatus, plantBody, setupServer } from '@test-support/api-fixture';
import { exportHeader, exportLine } from '@test-support/plant-fields';

const server = setupServer();

const BOM = '\uFEFF';

/** The export as bytes decoded by hand: fetch's text() would drop the byte order mark this checks. */
async function exported(token: string, query = '') {
  const response = await fetch(`${server.baseUrl}/api/plants/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, text };
}

describe('the CSV export', () => {
  it("is the view's plants, every one, in its order, exact and safe to open in a spreadsheet", async () => {
    const member = await server.createToken('export-member', 'member');
    const client = server.client(member.token);
    for (const [id, name, tag] of [
      [9223372036854775807n, '@SUM(1+1)', 'x'],
      [-9223372036854775808n, 'plain', 'x'],
      [7n, '-1+1', undefined],
      [8n, '+cmd|"/c calc"!A0', 'x'],
    ] as const) {
      expectStatus(await client.post('/api/plants', plantBody(id, name, tag)), 200);
    }
    const response = await exported(member.token, '?tag=x&sort=name&dir=desc');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="plants-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(response.text).toBe(
      `${BOM}${[
        exportHeader(),
        exportLine(-9223372036854775808n, { name: 'plain', tag: 'x' }),
        exportLine(9223372036854775807n, { name: "'@SUM(1+1)", tag: 'x' }),
        exportLine(8n, { name: `"'+cmd|""/c calc""!A0"`, tag: 'x' }),
      ].join('\r\n')}\r\n`,
    );
    // Without filters: every plant of the member, by id.
    const all = (await exported(member.token)).text.split('\r\n');
    expect(all.slice(1, -1).map((line) => line.split(',')[0])).toEqual(['-9223372036854775808', '7', '8', '9223372036854775807']);
    expect(all[2]).toBe(exportLine(7n, { name: "'-1+1" }));
  });

  it('fails like every other operation before the first byte: 401, 400, a member’s owner filter, 405', async () => {
    const anonymous = await server.anonymous.get('/api/plants/export');
    expectStatus(anonymous, 401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="plants"');
    expect(anonymous.json).toMatchObject({ error: 40100n });
    expect((await server.admin.get('/api/plants/export?sort=colour')).json).toMatchObject({ error: 40007n });
    expect((await server.admin.get('/api/plants/export?dir=up')).json).toMatchObject({ error: 40007n });
    expect((await server.admin.get(`/api/plants/export?q=${'x'.repeat(201)}`)).json).toMatchObject({ error: 40007n });
    expect((await server.admin.get('/api/plants/export?tag=a&tag=b')).json).toMatchObject({ error: 40007n });
    const member = await server.createToken('export-owner', 'member');
    expect((await server.client(member.token).get('/api/plants/export?owner=admin')).json).toMatchObject({ error: 40021n });
    const post = await server.rawClient(server.adminToken).post('/api/plants/export', '{}');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('streams an export of several batches, one export per token at a time', async () => {
    const bulk = await server.createToken('export-bulk', 'member');
    const client = server.rawClient(bulk.token);
    // 1,100 plants: two batches of the export.
    await Promise.all(
      Array.from({ length: 11 }, async (_, chunk) => {
        for (let index = 0; index < 100; index++) {
          const body = plantBody(1_000_000n + BigInt(chunk * 100 + index), `Bulk ${chunk * 100 + index}`);
          let created = await client.post('/api/plants', body);
          // 1,100 creates outrun the default bucket (600, then 100 a second) on a quiet machine: wait as told.
          while (created.status === 429) {
            await new Promise((resolve) => setTimeout(resolve, Number(created.headers.get('retry-after') ?? '1') * 1000));
            created = await client.post('/api/plants', body);
          }
          expectStatus(created, 200);
        }
      }),
    );
    const [one, two] = await Promise.all([exported(bulk.token), exported(bulk.token)]);
    const statuses = [one.status, two.status].sort();
    const texts = [one.text, two.text];
    // Either both ran one after the other, or the second was refused while the first ran.
    if (statuses[1] === 429) expect(texts.find((text) => text.includes('40900') || text.includes('42900'))).toBeDefined();
    const file = texts.find((text) => text.startsWith(BOM));
    expect(file, `${statuses.join(', ')}: ${texts.map((text) => text.slice(0, 200)).join(' | ')}`).toBeDefined();
    expect(file!.split('\r\n')).toHaveLength(1_102);
  }, 90_000);
});
