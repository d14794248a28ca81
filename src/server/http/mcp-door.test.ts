import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { initTRPC } from '@trpc/server';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import type { Logger } from '@/server/log';
import { plantsRouter } from '@/server/plants/router';
import { type Context, createTRPCRouter, protectedProcedure } from '@/server/trpc/init';
import { signIn } from '@test-support/actors';
import { serveInProcess } from '@test-support/front-in-process';

import { errorCatalog } from '@/shared/errors';

/**
 * The MCP door in this process, on routers made for the test: a procedure added with OpenAPI metadata
 * appears on all three doors (REST, tRPC, MCP) without a line of MCP code, and a fault inside a tool is
 * logged under the request id and told to the client as the catalogue's 50000. The end-to-end suite
 * (e2e/api/mcp*.test.ts) covers the real router on the built server.
 */
const logged: Record<string, unknown>[] = [];
const log: Logger = { info: () => {}, warn: () => {}, error: (entry) => logged.push(entry) };
const servers: { close: () => Promise<void> }[] = [];
const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(servers.map((server) => server.close()));
});

async function serve(router: Parameters<typeof serveInProcess>[0]): Promise<string> {
  const running = await serveInProcess(router, log);
  servers.push(running);
  return running.base;
}

async function connect(base: string, token: string): Promise<Client> {
  const client = new Client({ name: 'mcp-door-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  clients.push(client);
  return client;
}

const int64 = z.bigint().meta({ override: { type: 'integer', format: 'int64' } });

describe('a procedure added with OpenAPI metadata', () => {
  // A throwaway procedure: nothing about it is known to the MCP door.
  const router = createTRPCRouter({
    plants: plantsRouter,
    scratch: createTRPCRouter({
      echoTwice: protectedProcedure
        .meta({ openapi: { method: 'POST', path: '/scratch/echo', summary: 'Echo a number and a word twice', successDescription: 'The number and the word, twice' } })
        .input(z.strictObject({ number: int64, word: z.string().max(10) }))
        .output(z.object({ number: int64, words: z.array(z.string()) }))
        .declare({ cost: 1, errors: {} })
        .mutation(({ input }) => ({ number: input.number, words: [input.word, input.word] })),
    }),
  });

  it('is served on all three doors: REST, tRPC and MCP, with its int64 exact on each', async () => {
    const base = await serve(router);
    const { token } = await signIn('mcp-scratch');
    const authorization = `Bearer ${token}`;

    const rest = await fetch(`${base}/api/scratch/echo`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: '{"number": 9007199254740993, "word": "fern"}',
    });
    expect(await rest.text()).toBe('{"number":9007199254740993,"words":["fern","fern"]}');

    const document = (await (await fetch(`${base}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain('/scratch/echo');

    const trpc = await fetch(`${base}/api/trpc/scratch.echoTwice`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(superjson.serialize({ number: 9007199254740993n, word: 'fern' })),
    });
    const { result } = (await trpc.json()) as { result: { data: Parameters<typeof superjson.deserialize>[0] } };
    expect(superjson.deserialize(result.data)).toEqual({ number: 9007199254740993n, words: ['fern', 'fern'] });

    const client = await connect(base, token);
    const { tools } = await client.listTools();
    const tool = tools.find((candidate) => candidate.name === 'scratch_echo_twice');
    expect(tool).toMatchObject({
      title: 'Echo a number and a word twice',
      description: 'Echo a number and a word twice. Returns: The number and the word, twice.',
      inputSchema: { type: 'object', required: ['number', 'word'], additionalProperties: false },
      outputSchema: { type: 'object', properties: { number: { type: 'string' }, words: { type: 'array' } } },
      annotations: { readOnlyHint: false, destructiveHint: false },
    });
    expect(tool!.inputSchema.properties!.number).toMatchObject({ anyOf: [{ type: 'integer', format: 'int64' }, { type: 'string' }] });
    const call = await client.callTool({ name: 'scratch_echo_twice', arguments: { number: '9007199254740993', word: 'fern' } });
    expect(call.structuredContent).toEqual({ number: '9007199254740993', words: ['fern', 'fern'] });
    expect(call.content).toEqual([{ type: 'text', text: '{"number":9007199254740993,"words":["fern","fern"]}' }]);

    // Its own validation, through the same translation as the other doors.
    const refused = await client.callTool({ name: 'scratch_echo_twice', arguments: { number: 1, word: 'fern', extra: true } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as { text: string }[])[0]!.text)).toEqual({ error: errorCatalog.unknownField.value, message: expect.stringContaining('"extra"') });
  });
});

describe('a tool whose procedure fails', () => {
  const t = initTRPC.context<Context>().meta<OpenApiMeta>().create();
  const failingRouter = t.router({
    explode: t.procedure
      .meta({ openapi: { method: 'GET', path: '/explode' } })
      .input(z.object({}))
      .output(z.object({}))
      .query(() => {
        throw new Error('SQLITE_CORRUPT: secret table "Plant" at /var/lib/secret.db');
      }),
  });

  it('answers isError with 50000 and the request id only, and logs the cause under that id', async () => {
    const base = await serve(failingRouter);
    const { token } = await signIn('mcp-explode');
    const client = await connect(base, token);
    const result = await client.callTool({ name: 'explode', arguments: {} });
    expect(result.isError).toBe(true);
    const body = JSON.parse((result.content as { text: string }[])[0]!.text) as { error: number; message: string };
    expect(Object.keys(body).sort()).toEqual(['error', 'message']);
    expect(body.error).toBe(errorCatalog.internal.value);
    expect(body.message).not.toMatch(/SQLITE|secret|Plant/);
    const requestId = /request id ([0-9a-f-]{36})/.exec(body.message)?.[1];
    const entry = logged.find((candidate) => candidate.requestId === requestId);
    expect(String((entry?.err as Error | undefined)?.message)).toContain('SQLITE_CORRUPT');
  });
});
