import fc from 'fast-check';
import superjson from 'superjson';
import { afterAll, describe, expect, it } from 'vitest';

import type { Logger } from '@/server/log';
import { appRouter } from '@/server/app-router';
import { type DeclaredProcedure, errorsOf, inputFields } from '@/server/problems';
import { proceduresOf } from '@/server/trpc/init';
import { errorCatalog, type ErrorKind } from '@/shared/errors';
import { signIn } from '@test-support/actors';
import { serveInProcess } from '@test-support/front-in-process';

import { buildToolCatalog, toolName } from './mcp/tools';
import { restErrorKinds } from './rest/door-errors';
import { type RestRoute, restOperations } from './rest/routing';
import { trpcErrorKinds } from './trpc-door';

/**
 * Every error answer of every procedure is one its declared error map allows (`.declare({ cost, errors })`, with
 * what every call and its input's check can answer: server/problems.ts, `errorsOf`), on each door that serves it:
 * tRPC (every procedure), REST and MCP (the public ones; REST places input problems by where the field came
 * from, http/rest/door-errors.ts). Each procedure is called on each door without a token, with a bad one, as a
 * member and as an admin, with inputs drawn (fast-check, fixed seed) from values that break and values that
 * pass its schema's fields: wrong types, out of range, unknown ids, unknown fields. The allowed values are
 * read from the same function the OpenAPI document and the MCP descriptions are written from.
 */
const log: Logger = { info: () => {}, warn: () => {}, error: () => {} };
const running = await serveInProcess(appRouter, log);
afterAll(() => running.close());
const { base } = running;

const admin = (await signIn('error-maps-admin', 'admin')).token;
const member = (await signIn('error-maps-member')).token;
/** Who calls: nobody, a token that is no token, a member, an admin (most calls: they reach furthest). */
const callers = [null, 'pst_not-a-token', member, admin, admin, admin];

/** Values for any field: of the wrong type, out of range, unknown ids, and ones some schema takes. Never 1: ids 1 are the test's tokens. */
const VALUES: unknown[] = [null, true, 0, -1, 2, 1.5, 99_999, 2 ** 40, '', ' ', 'a', 'plant', '99999', 'x'.repeat(3000), '\u0000', [], [2], {}, { kind: 'ids', ids: [] }, 'asc', 'created', 'member'];

type Procedure = { path: string; type: string; declared: DeclaredProcedure; fields: string[] };
const procedures: Procedure[] = proceduresOf(appRouter).map(([path, procedure]) => {
  const def = procedure._def as unknown as DeclaredProcedure & { type: string };
  return { path, type: def.type, declared: def, fields: inputFields(def.inputs).fields.map((field) => field.name) };
});
const tools = new Set(buildToolCatalog(appRouter, { onFault: () => {} }).listFor({ userId: 0, name: 'error-maps', role: 'admin' }).map((tool) => tool.name));
const routes = new Map(restOperations(appRouter).map(({ route, procedure }) => [route.procedure.path, { route, allowed: restErrorKinds(route, procedure) }]));

/** Inputs for a procedure: none, and objects of some of its fields (and an unknown one) with values drawn from VALUES. */
function inputsFor(procedure: Procedure): unknown[] {
  const field = fc.constantFrom(...procedure.fields, 'unknownField');
  const input = fc.dictionary(field, fc.constantFrom(...VALUES), { maxKeys: procedure.fields.length + 1 });
  return [undefined, {}, ...fc.sample(input, { seed: procedure.path.length * 7919, numRuns: 14 })];
}

type Answer = { value: number } | undefined;

const authorization = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });

async function viaTrpc(procedure: Procedure, input: unknown, token: string | null): Promise<Answer> {
  const url = `${base}/api/trpc/${procedure.path}`;
  const encoded = JSON.stringify(superjson.serialize(input));
  const aborted = new AbortController();
  const response =
    procedure.type === 'mutation'
      ? await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...authorization(token) }, body: encoded })
      : await fetch(`${url}?input=${encodeURIComponent(encoded)}`, { headers: authorization(token), signal: aborted.signal });
  if (procedure.type === 'subscription' && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A stream that started: its first message tells a refusal (`serialized-error`) from a feed that runs.
    const reader = response.body!.getReader();
    let text = '';
    while (!/\n\n/.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    aborted.abort();
    const error = /event: serialized-error\ndata: (.*)\n/.exec(text)?.[1];
    if (error === undefined) return undefined;
    const shape = JSON.parse(error) as { json?: { data: { error: number } } };
    return { value: shape.json!.data.error };
  }
  const body = (await response.json()) as { error?: { json?: { data?: { error?: number } } } };
  const value = body.error?.json?.data?.error;
  if (body.error && typeof value !== 'number') throw new Error(`tRPC ${procedure.path}: an error without an error value: ${JSON.stringify(body)}`);
  return value === undefined ? undefined : { value };
}

async function viaRest(route: RestRoute, input: unknown, token: string | null): Promise<Answer> {
  const fields = (input ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  // An empty path value is a path no operation has (a 404 of the router, not of the procedure).
  const path = route.template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(text(fields[name] ?? '') || '99999'));
  const rest = Object.fromEntries(Object.entries(fields).filter(([name]) => !route.pathParameters.includes(name)));
  const headers: Record<string, string> = authorization(token);
  let url = `${base}/api${path}`;
  let body: string | undefined;
  if (route.method === 'GET' || route.method === 'DELETE') {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(rest)) for (const each of Array.isArray(value) ? value : [value]) query.append(name, text(each));
    url += `?${query}`;
  } else if (route.textBody) {
    headers['content-type'] = 'text/csv';
    body = text(rest[route.textBody] ?? '');
  } else if (route.takesBody) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(rest);
  }
  const response = await fetch(url, { method: route.method, headers, body });
  if (response.status < 400) {
    await response.arrayBuffer();
    return undefined;
  }
  return { value: ((await response.json()) as { error: number }).error };
}

async function viaMcp(procedure: Procedure, input: unknown, token: string | null): Promise<Answer> {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: toolName(procedure.path), arguments: input ?? {} } };
  const response = await fetch(`${base}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...authorization(token) },
    body: JSON.stringify(call),
  });
  const body = (await response.json()) as { error?: number; result?: { isError?: boolean; content: { text: string }[] } };
  // The door's own refusal (a token it does not take): the catalogue's {error, message}, as REST's.
  if (typeof body.error === 'number') return { value: body.error };
  if (!body.result?.isError) return undefined;
  return { value: (JSON.parse(body.result.content[0]!.text) as { error: number }).error };
}

const kindByValue = new Map<number, ErrorKind>(Object.entries(errorCatalog).map(([kind, { value }]) => [value, kind as ErrorKind]));

describe("every error answer is in its procedure's declared map", () => {
  it('on tRPC, REST and MCP, for every procedure', { timeout: 240_000 }, async () => {
    const outside = new Set<string>();
    const seen: Record<string, Set<ErrorKind>> = { tRPC: new Set(), REST: new Set(), MCP: new Set() };
    let calls = 0;
    for (const procedure of procedures) {
      const rest = routes.get(procedure.path);
      const doors: [string, (input: unknown, token: string | null) => Promise<Answer>, ErrorKind[]][] = [['tRPC', (input, token) => viaTrpc(procedure, input, token), trpcErrorKinds(procedure.declared)]];
      if (rest) doors.push(['REST', (input, token) => viaRest(rest.route, input, token), rest.allowed]);
      if (tools.has(toolName(procedure.path))) doors.push(['MCP', (input, token) => viaMcp(procedure, input, token), errorsOf(procedure.declared)]);
      const inputs = inputsFor(procedure);
      for (const [door, call, kinds] of doors) {
        for (const [index, input] of inputs.entries()) {
          const answer = await call(input, callers[index % callers.length]!);
          calls++;
          if (!answer) continue;
          const kind = kindByValue.get(answer.value);
          if (kind) seen[door]!.add(kind);
          if (!kind || !kinds.includes(kind)) outside.add(`${door} ${procedure.path}: ${answer.value} (${kind ?? 'not in the catalogue'}) for ${JSON.stringify(input)?.slice(0, 120)}`);
        }
      }
    }
    console.log(`[error-maps] ${calls} calls; kinds seen: ${Object.entries(seen).map(([door, kinds]) => `${door} ${kinds.size}`).join(', ')}`);
    expect([...outside]).toEqual([]);
    // The calls reach past the guard into inputs and services on every door, or the check above holds little.
    for (const door of Object.keys(seen)) expect([...seen[door]!], door).toEqual(expect.arrayContaining(['missingToken', 'invalidToken', 'wrongType', 'invalidValue', 'webhookEndpointNotFound', 'importNotFound']));
  });
});
