import { beforeAll, describe, expect, it } from 'vitest';

import { buildOpenApiDocument } from '@/server/http/rest/openapi';
import { buildToolCatalog } from '@/server/http/mcp/tools';
import { problemFromError } from '@/server/problems';
import { signIn } from '@test-support/actors';

import { appRouter } from '@/server/app-router';

type ZodLike = { _zod: { def: Record<string, unknown> } };
const isSchema = (value: unknown): value is ZodLike => typeof value === 'object' && value !== null && '_zod' in value;

/** Every schema reachable from `schema` whose `coerce` is on (zod's `z.coerce.*`): its path. */
function coercedIn(schema: unknown, path: string, seen = new Set<unknown>()): string[] {
  if (!isSchema(schema) || seen.has(schema)) return [];
  seen.add(schema);
  const { def } = schema._zod;
  const found = def.coerce === true ? [path] : [];
  for (const [key, value] of Object.entries(def)) {
    const members = isSchema(value) ? [[key, value]] : typeof value === 'object' && value !== null ? Object.entries(value) : [];
    for (const [name, member] of members) found.push(...coercedIn(member, `${path}.${name}`, seen));
  }
  return found;
}

/**
 * trpc-to-openapi's request handler switched zod's `coerce` on, in place, for the top-level number, bigint
 * and boolean fields of every input it served, so for every door: after the first REST request the tRPC
 * door took `"7"` for an id and MCP `true` for 1. The REST door no longer runs that handler; the library
 * still writes the document, which must leave the schemas as they are.
 */
describe('no door coerces a value into another JSON type', () => {
  beforeAll(() => {
    buildOpenApiDocument(appRouter);
  });

  it('leaves coerce off in every input schema once the document is built', () => {
    const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { inputs: unknown[] } }>);
    const coerced = procedures.flatMap(([name, procedure]) => procedure._def.inputs.flatMap((input) => coercedIn(input, name)));
    expect(coerced).toEqual([]);
  });

  it('tRPC: a create with the id "7" is refused as the wrong type', async () => {
    const { caller } = await signIn('coercion-trpc');
    const input = { id: '7', name: 'Fern' } as unknown as { id: bigint; name: string };
    const error = await caller.plants.create(input).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(problemFromError(error, input)).toMatchObject({ kind: 'wrongType', field: 'id' });
    expect(await caller.plants.list({})).toEqual([]);
  });

  it('MCP: true for an id and "false" for enabled are refused as the wrong type', async () => {
    const catalog = buildToolCatalog(appRouter, { onFault: (error) => expect.fail(String(error)) });
    const { context } = await signIn('coercion-mcp', 'admin');
    const plant = await catalog.call('plants_create', { id: true, name: 'Fern' }, context);
    expect(plant).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('"error":40003') }] });
    const endpoint = await catalog.call('webhooks_create', { url: 'https://example.com/hooks', events: ['plant.created'], enabled: 'false' }, context);
    expect(endpoint).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('"error":40003') }] });
  });
});
