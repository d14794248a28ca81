/**
 * The MCP door with a real client: the official SDK's Client over its Streamable HTTP transport, against
 * the built server, on both engines. It lists the tools (an admin's and a member's), calls every one of
 * them, and reads what it gets the way a client program would: ids exact both ways (9007199254740993 in
 * and out), the procedures' own access rules, validation and errors, and the same data as the REST door.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

import { expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { connectMcp, expectToolError, expectToolResult, postMcp, rpcText } from '@test-support/mcp-client';
import { eventually, webhookEnv } from '@test-support/webhook-endpoints';
import type { ApiClient } from '@test-support/http-client';

const server = setupServer({ env: webhookEnv() });
const nextId = idSource(700_000n);

const PLANT_TOOLS = [
  'plants_create',
  'plants_delete',
  'plants_imports_create',
  'plants_imports_get',
  'plants_imports_list',
  'plants_imports_part',
  'plants_imports_preview',
  'plants_imports_rows',
  'plants_imports_run',
  'plants_imports_stop',
  'plants_list',
  'plants_update',
];
const WEBHOOK_TOOLS = [
  'webhooks_create',
  'webhooks_delete',
  'webhooks_deliveries',
  'webhooks_get',
  'webhooks_list',
  'webhooks_retry',
  'webhooks_rotate_secret',
  'webhooks_send_test',
  'webhooks_update',
];

type Plant = { id: string; name: string; tag?: string };

let admin: Client;
let member: Client;
let memberRest: ApiClient;
let adminTools: Tool[];
const receivers: Receiver[] = [];

beforeAll(async () => {
  const memberToken = (await server.createToken('mcp-member', 'member')).token;
  memberRest = server.rawClient(memberToken);
  admin = await connectMcp(server.baseUrl, server.adminToken);
  member = await connectMcp(server.baseUrl, memberToken);
  adminTools = (await admin.listTools()).tools;
});

afterAll(async () => {
  await Promise.all([admin?.close(), member?.close(), ...receivers.map((receiver) => receiver.close())]);
});

const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args });

describe('connecting', () => {
  it('names the server and gives the model its instructions (ids, pages, errors)', () => {
    expect(admin.getServerVersion()).toMatchObject({ name: 'plant-store', title: 'Plant Store' });
    expect(admin.getServerCapabilities()).toMatchObject({ tools: {} });
    expect(admin.getInstructions()).toMatch(/int64.*string of digits/s);
  });
});

describe('the tool list', () => {
  it("is an admin's: one tool per public procedure, each with a title, a description, and object schemas", () => {
    console.log(`[mcp] the tools an admin's client lists:\n${adminTools.map((tool) => `  ${tool.name}: ${tool.description}`).join('\n')}`);
    expect(adminTools.map((tool) => tool.name).sort()).toEqual([...PLANT_TOOLS, ...WEBHOOK_TOOLS]);
    for (const tool of adminTools) {
      expect(tool.title, tool.name).toBeTruthy();
      expect(tool.description!.length, tool.name).toBeGreaterThan(20);
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(JSON.stringify(tool), `${tool.name} refers to nothing outside itself`).not.toContain('$ref');
      expect(JSON.stringify(tool), `${tool.name} gives each schema one type (portable to one-type dialects)`).not.toMatch(/"type":\[/);
      if (tool.outputSchema) expect(tool.outputSchema.type, tool.name).toBe('object');
    }
  });

  it("is a member's without the admin-only tools (a model is not offered what always fails)", async () => {
    const { tools } = await member.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(PLANT_TOOLS);
  });

  it('describes ids as int64 sent as integers or digits, and returned as digits', () => {
    const create = adminTools.find((tool) => tool.name === 'plants_create')!;
    expect(create.inputSchema.properties!.id).toMatchObject({
      anyOf: [
        { type: 'integer', format: 'int64', minimum: -9007199254740991, maximum: 9007199254740991 },
        { type: 'string', pattern: '^-?[0-9]{1,19}$' },
      ],
    });
    expect(create.outputSchema!.properties!.id).toMatchObject({ type: 'string', pattern: '^-?[0-9]{1,19}$' });
    expect(create.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(adminTools.find((tool) => tool.name === 'plants_list')!.annotations).toMatchObject({ readOnlyHint: true });
    expect(adminTools.find((tool) => tool.name === 'plants_delete')!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
  });
});

describe('plants_create', () => {
  it('keeps 9007199254740993 exact through the SDK client: sent as digits, returned as digits and as the exact number', async () => {
    const { structured, exact } = expectToolResult<Plant>(await call(admin, 'plants_create', { id: '9007199254740993', name: 'Monstera', tag: 'tropical' }));
    expect(structured).toEqual({ id: '9007199254740993', name: 'Monstera', tag: 'tropical' });
    expect(exact).toEqual({ id: 9007199254740993n, name: 'Monstera', tag: 'tropical' });
    // The same plant on the REST door, exact.
    const listed = await server.rawClient(server.adminToken).get('/api/plants?after=9007199254740992&limit=1');
    expect(listed.text).toBe('[{"id":9007199254740993,"name":"Monstera","tag":"tropical"}]');
  });

  it('takes an id as a JSON integer within ±(2^53 − 1), and refuses a larger JSON number (40003): it may have been rounded on its way', async () => {
    expect(expectToolResult<Plant>(await call(admin, 'plants_create', { id: 7, name: 'Fern' })).structured).toEqual({ id: '7', name: 'Fern' });
    expect(expectToolResult<Plant>(await call(admin, 'plants_create', { id: Number.MAX_SAFE_INTEGER, name: 'Safe' })).structured.id).toBe('9007199254740991');
    // What the SDK client makes of 9007199254740993 as a number: JavaScript has already rounded it.
    expectToolError(await call(admin, 'plants_create', { id: 9007199254740993, name: 'Rounded' }), 'wrongType', 'send it as a string of digits');
    // The exact digits as a JSON number, as a lossless writer would send them: refused alike (the server cannot tell).
    const body = rpcText('tools/call', { name: 'plants_create', arguments: { id: 1, name: 'Raw' } }).replace('"id":1,"name"', '"id":9007199254740995,"name"');
    const response = await postMcp(server.baseUrl, server.adminToken, body);
    expectStatus(response, 200);
    expectToolError(response.json.result, 'wrongType', 'id is a JSON number beyond ±9007199254740991');
  });

  it('takes the ends of the int64 range and refuses one past them (error 40004)', async () => {
    for (const id of ['9223372036854775807', '-9223372036854775808']) {
      expect(expectToolResult<Plant>(await call(admin, 'plants_create', { id, name: `end ${id}` })).structured.id).toBe(id);
    }
    expectToolError(await call(admin, 'plants_create', { id: '9223372036854775808', name: 'past' }), 'invalidValue', 'id must be at most 9223372036854775807');
  });

  it("refuses what the procedure refuses, with the REST door's values: taken id, missing, mistyped, invalid and unknown fields", async () => {
    expectToolError(await call(admin, 'plants_create', { id: '7', name: 'again' }), 'plantIdTaken', 'already exists');
    expectToolError(await call(admin, 'plants_create', { id: String(nextId()) }), 'missingField', 'name is required');
    expectToolError(await call(admin, 'plants_create', { id: 1.5, name: 'half' }), 'wrongType', 'id must be an integer');
    expectToolError(await call(admin, 'plants_create', { id: 'seven', name: 'word' }), 'wrongType', 'id must be an integer');
    expectToolError(await call(admin, 'plants_create', { id: String(nextId()), name: '\u200b' }), 'invalidValue', 'visible character');
    expectToolError(await call(admin, 'plants_create', { id: String(nextId()), name: 'x'.repeat(201) }), 'invalidValue', 'at most 200 characters');
    expectToolError(await call(admin, 'plants_create', { id: String(nextId()), name: 'owned', ownerId: 1 }), 'unknownField', '"ownerId"');
  });
});

describe('plants_list', () => {
  const tag = 'mcp-paging';
  const created: string[] = [];

  beforeAll(async () => {
    for (let index = 0; index < 5; index++) {
      const id = String(nextId());
      created.push(id);
      expectToolResult(await call(member, 'plants_create', { id, name: `Paged ${index}`, tag }));
    }
  });

  it('pages through a filter by following next, which is exactly the arguments of the following page', async () => {
    const seen: string[] = [];
    let args: Record<string, unknown> | undefined = { tag, limit: 2 };
    let pages = 0;
    while (args) {
      const page: { structured: { items: Plant[]; next?: Record<string, unknown> } } = expectToolResult(await call(member, 'plants_list', args));
      const { structured } = page;
      seen.push(...structured.items.map((plant) => plant.id));
      if (structured.next) expect(structured.next).toEqual({ limit: 2, tag, after: structured.items.at(-1)!.id });
      args = structured.next;
      expect(++pages).toBeLessThanOrEqual(3);
    }
    expect(seen).toEqual(created);
  });

  it('filters by name (q) and reads the same list as the REST door', async () => {
    const { structured } = expectToolResult<{ items: Plant[] }>(await call(member, 'plants_list', { q: 'PAGED 3' }));
    expect(structured.items.map((plant) => plant.id)).toEqual([created[3]]);
    const rest = await memberRest.get(`/api/plants?tag=${tag}`);
    expect(rest.json.map((plant: { id: bigint }) => String(plant.id))).toEqual(created);
  });

  it("shows a member only their own plants, and refuses them the owner filter (40021) and bad values (40004)", async () => {
    const { structured } = expectToolResult<{ items: Plant[] }>(await call(member, 'plants_list', { limit: 1000 }));
    expect(structured.items.map((plant) => plant.id)).toEqual(created);
    expectToolError(await call(member, 'plants_list', { owner: 'admin' }), 'ownerFilterForAdmins');
    expectToolError(await call(member, 'plants_list', { limit: 0 }), 'invalidValue', 'limit must be an integer from 1 to 1000');
    expectToolError(await call(member, 'plants_list', { limit: '1001' }), 'invalidValue', 'limit must be an integer from 1 to 1000');
  });
});

describe('plants_update and plants_delete', () => {
  it('rename, remove a tag, and delete once: a second delete is not found (40401)', async () => {
    const id = String(nextId());
    expectToolResult(await call(member, 'plants_create', { id, name: 'Pothos', tag: 'vine' }));
    expect(expectToolResult<Plant>(await call(member, 'plants_update', { id, name: 'Golden pothos', tag: null })).structured).toEqual({ id, name: 'Golden pothos' });
    expectToolError(await call(member, 'plants_update', { id }), 'emptyPatch');
    const deleted = await call(member, 'plants_delete', { id });
    expect(deleted.isError ?? false).toBe(false);
    expect(deleted.structuredContent).toBeUndefined();
    expectToolError(await call(member, 'plants_delete', { id }), 'plantNotFound', `no plant with id ${id}`);
  });

  it("answers a member's update or delete of an admin's plant exactly as a missing plant, and leaves it alone", async () => {
    const missing = String(nextId());
    const foreign = expectToolError(await call(member, 'plants_delete', { id: '9007199254740993' }), 'plantNotFound');
    const absent = expectToolError(await call(member, 'plants_delete', { id: missing }), 'plantNotFound');
    expect(foreign.message.replace('9007199254740993', 'N')).toBe(absent.message.replace(missing, 'N'));
    expectToolError(await call(member, 'plants_update', { id: '9007199254740993', name: 'mine now' }), 'plantNotFound');
    const still = expectToolResult<{ items: Plant[] }>(await call(admin, 'plants_list', { after: '9007199254740992', limit: 1 }));
    expect(still.structured.items).toEqual([{ id: '9007199254740993', name: 'Monstera', tag: 'tropical' }]);
  });
});

describe('the webhook tools', () => {
  it('are all callable by an admin: register, read, change, test, read the log, retry, rotate, list, delete', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const created = expectToolResult<{ id: number; secret: string; url: string }>(
      await call(admin, 'webhooks_create', { url: receiver.url, events: ['plant.created'], description: 'mcp' }),
    ).structured;
    expect(created.secret).toMatch(/^whsec_/);
    const id = created.id;
    expect(expectToolResult<{ id: number; secret?: string }>(await call(admin, 'webhooks_get', { id })).structured).not.toHaveProperty('secret');
    expect(expectToolResult<{ description: string }>(await call(admin, 'webhooks_update', { id, description: 'changed' })).structured.description).toBe('changed');
    const test = expectToolResult<{ id: number; type: string; plantId: string | null }>(await call(admin, 'webhooks_send_test', { id })).structured;
    expect(test).toMatchObject({ type: 'webhook.test', plantId: null });
    await receiver.waitFor(1);
    const log = await eventually(
      async () => expectToolResult<{ items: { id: number; status: string }[] }>(await call(admin, 'webhooks_deliveries', { id, limit: 5 })).structured.items,
      (items) => items.some((delivery) => delivery.status === 'delivered'),
      15_000,
      'the test delivery delivered',
    );
    expect(expectToolResult<{ id: number }>(await call(admin, 'webhooks_retry', { id: log[0]!.id })).structured.id).toBe(log[0]!.id);
    expect(expectToolResult<{ secret: string }>(await call(admin, 'webhooks_rotate_secret', { id })).structured.secret).not.toBe(created.secret);
    const listed = expectToolResult<{ items: { id: number }[] }>(await call(admin, 'webhooks_list')).structured.items;
    expect(listed.map((endpoint) => endpoint.id)).toContain(id);
    expect((await call(admin, 'webhooks_delete', { id })).isError ?? false).toBe(false);
    expectToolError(await call(admin, 'webhooks_get', { id }), 'webhookEndpointNotFound');
  });

  it('carry a plant id exact in a delivery (int64 as digits)', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { id } = expectToolResult<{ id: number }>(await call(admin, 'webhooks_create', { url: receiver.url, events: ['plant.created'] })).structured;
    expectStatus(await server.rawClient(server.adminToken).post('/api/plants', plantBody(9007199254740997n, 'hooked')), 200);
    const [delivery] = await eventually(
      async () => expectToolResult<{ items: { plantId: string | null }[] }>(await call(admin, 'webhooks_deliveries', { id })).structured.items,
      (items) => items.length > 0,
    );
    expect(delivery!.plantId).toBe('9007199254740997');
    expect((await call(admin, 'webhooks_delete', { id })).isError ?? false).toBe(false);
  });

  it("refuse a member who calls one by name though it is not in their list: the procedure's own 403 (40300)", async () => {
    expectToolError(await call(member, 'webhooks_list'), 'forbidden', 'webhooks:manage');
  });
});
