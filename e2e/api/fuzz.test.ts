/**
 * Hostile input, generated with fast-check from the served OpenAPI document (`/api/openapi.json`): its
 * operations, their parameters and the NewPlant schema, each mutated (wrong types, numbers beyond int64,
 * fractions and exponents, unicode edge cases, duplicate and unknown fields, prototype keys, odd headers,
 * invalid UTF-8, BOM, path tricks). The invariants, for every request:
 *
 * - never a 5xx, never a request left without an answer;
 * - every non-2xx answer under /api (tRPC and the docs page aside) is `Content-Type: application/json`
 *   with exactly `{"error": <int32>, "message": <string>}`, and no internal detail in the message;
 * - a request the contract says is valid is answered 200 with the plant exactly as sent (or 40006 when
 *   its id is taken); one it says is invalid is never answered 2xx;
 * - after the run, every stored plant keeps the Plant rules (each field as the document declares it: 1 to its
 *   maxLength code points, not only white space or invisible characters, no control characters; id int64) and
 *   is what was answered.
 *
 * Violations are collected by kind (with the shortest example of each) instead of stopping at the first,
 * so one run reports every kind of fault it met. The seed is fixed (FUZZ_SEED=<n> runs another) and printed
 * with every failure. The generators and the oracle are beside this file, in fuzz/.
 * Rate limits are off on this server: a 429 would only hide what the input does.
 */
import http from 'node:http';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectNoInternalDetail, nextLink, setupServer } from '@test-support/api-fixture';
import { inlineRefs } from '@test-support/openapi-conformance';
import { parseLossless } from '@test-support/http-client';
import { REQUEST_BUDGET_MS, serverTime } from '@test-support/server-cpu';

import { authCase, bodyCase, CONTENT_TYPES, EXTRA_HEADERS, hostValue, ID_SPELLINGS, PATHS, queryArbitrary, type SentPlant } from './fuzz/generators';
import { combine, type Expectation, INT32, isUtf8, type Json, plantProblems, queryRule, type TextField, textFieldsOf } from './fuzz/oracle';

const server = setupServer({ env: { RATE_LIMIT_PER_TOKEN: 'off', RATE_LIMIT_AUTH_FAILURES: 'off' } });

/** Fixed, so a run is the same run every time and a failure replays as it is; FUZZ_SEED=<n> tries another. */
const DEFAULT_SEED = 20_251_126;
const SEED = Number(process.env.FUZZ_SEED ?? DEFAULT_SEED);
/** Per property: a bound in count and in time. */
const TIME_LIMIT_MS = 25_000;


let memberToken = '';
let port = 0;

// ---------------------------------------------------------------------------------------------------------
// What the run saw

const violations = new Map<string, { count: number; example: string }>();
const statusCounts = new Map<string, number>();
let casesRun = 0;
let requestsSent = 0;
let fiveHundreds = 0;
/** The most server time (ms) one request cost. */
let mostExpensive = 0;

function violation(kind: string, example: string): void {
  const seen = violations.get(kind);
  if (!seen) violations.set(kind, { count: 1, example });
  else {
    seen.count++;
    if (example.length < seen.example.length) seen.example = example;
  }
}

/** The plants the server answered 200 to a create, by id, as answered; ids it deleted are removed. */
const acknowledged = new Map<bigint, SentPlant>();

// ---------------------------------------------------------------------------------------------------------
// Sending exact bytes

type Sent = { method: string; path: string; headers: [string, string][]; body?: Buffer; chunked?: boolean };
type Received = { status: number; headers: http.IncomingHttpHeaders; text: string; bytes: Buffer };

function describeSent(sent: Sent): string {
  const body = sent.body === undefined ? '' : ` body(${sent.body.length} B${sent.chunked ? ', chunked' : ''}): ${JSON.stringify(sent.body.subarray(0, 240).toString('latin1'))}`;
  const headers = sent.headers.map(([name, value]) => `${name}: ${value.length > 80 ? `${value.slice(0, 80)}…(${value.length})` : value}`).join(' | ');
  return `${sent.method} ${sent.path.length > 200 ? `${sent.path.slice(0, 200)}…(${sent.path.length})` : sent.path} [${headers}]${body}`;
}

function describeReceived(received: Received): string {
  return `→ ${received.status} ${received.headers['content-type'] ?? '(no content-type)'} ${received.text.slice(0, 200)}`;
}

/**
 * Sends the request, and holds it to the cost budget (cost.test.ts): a request that costs the server's main
 * thread more than REQUEST_BUDGET_MS is sent twice more and judged by its cheapest run, since a garbage
 * collection can land in any one. (A second create or delete of the same thing changes nothing stored.)
 */
async function send(sent: Sent): Promise<Received | string | undefined> {
  const { result: received, ms: first } = await serverTime(server.pid, () => sendOnce(sent));
  let ms = first;
  for (let again = 0; again < 2 && ms >= REQUEST_BUDGET_MS && typeof received === 'object'; again++) ms = Math.min(ms, (await serverTime(server.pid, () => sendOnce(sent))).ms);
  if (ms >= REQUEST_BUDGET_MS && typeof received === 'object') violation(`a request that cost the server over ${REQUEST_BUDGET_MS} ms`, `${describeSent(sent)}\n    ${ms.toFixed(0)} ms ${describeReceived(received)}`);
  mostExpensive = Math.max(mostExpensive, ms);
  return received;
}

/** Sends the request as given (path bytes, header order and duplicates kept); undefined if Node refuses to send it. */
async function sendOnce(sent: Sent): Promise<Received | string | undefined> {
  const flat = sent.headers.flatMap(([name, value]) => [name, value]);
  let request: http.ClientRequest;
  return new Promise((resolve) => {
    try {
      request = http.request(
        { host: '127.0.0.1', port, method: sent.method, path: sent.path, headers: flat, setHost: false, agent: false, timeout: 15_000 },
        (response) => {
          const parts: Buffer[] = [];
          response.on('data', (part: Buffer) => parts.push(part));
          response.on('end', () => {
            const bytes = Buffer.concat(parts);
            resolve({ status: response.statusCode ?? 0, headers: response.headers, text: bytes.toString('utf8'), bytes });
          });
          response.on('error', (error) => resolve(`the answer broke off: ${error.message}`));
        },
      );
    } catch {
      return resolve(undefined);
    }
    // Node's client hands the answer to a CONNECT to 'connect' (with the raw socket), not to the callback.
    request.on('connect', (response: http.IncomingMessage, socket, head: Buffer) => {
      const parts: Buffer[] = [head];
      socket.on('data', (part: Buffer) => parts.push(part));
      socket.on('end', () => {
        const bytes = Buffer.concat(parts);
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text: bytes.toString('utf8'), bytes });
      });
    });
    request.on('timeout', () => request.destroy(new Error('no answer within 15 s')));
    request.on('error', (error) => resolve(`no answer: ${error.message}`));
    requestsSent++;
    if (sent.body === undefined) request.end();
    else if (sent.chunked) {
      request.write(sent.body);
      request.end();
    } else request.end(sent.body);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Checks on every answer

function resolvedPath(rawPath: string): string | undefined {
  try {
    return new URL(rawPath, 'http://x').pathname;
  } catch {
    return undefined;
  }
}

/** Under /api and answered by the REST surface (tRPC and the docs page keep their own formats). */
function isRestPath(rawPath: string): boolean {
  const path = resolvedPath(rawPath);
  if (path === undefined) return false;
  const underApi = path === '/api' || path.startsWith('/api/');
  return underApi && !path.startsWith('/api/trpc') && !path.startsWith('/api/docs');
}

function checkCommon(sent: Sent, received: Received | string | undefined): received is Received {
  if (received === undefined) return false;
  const where = `${describeSent(sent)}\n    ${typeof received === 'string' ? received : describeReceived(received)}`;
  if (typeof received === 'string') {
    violation('no complete answer', where);
    return false;
  }
  casesRun++;
  statusCounts.set(String(received.status), (statusCounts.get(String(received.status)) ?? 0) + 1);
  if (received.status >= 500) {
    fiveHundreds++;
    const host = sent.headers.find(([name]) => name.toLowerCase() === 'host')?.[1];
    const cause = sent.method === 'TRACE' ? ' to TRACE' : host !== `127.0.0.1:${port}` ? ' with an odd Host header' : '';
    violation(`${received.status} answer${cause}`, where);
  }
  // A 304 is no error: the conditional list's answer to a matching If-None-Match (`*` matches any list), with no body.
  if (received.status === 304 && !(sent.method === 'GET' || sent.method === 'HEAD')) violation('a 304 to a request that is not a GET or HEAD', where);
  if (received.status >= 300 && received.status !== 304 && isRestPath(sent.path)) {
    const mediaType = String(received.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== 'application/json') violation('error answer without Content-Type: application/json', where);
    if (sent.method !== 'HEAD') {
      let body: unknown;
      try {
        body = parseLossless(received.text);
      } catch {
        body = undefined;
      }
      const shaped =
        typeof body === 'object' &&
        body !== null &&
        !Array.isArray(body) &&
        Object.keys(body).sort().join() === 'error,message' &&
        typeof (body as Json).error === 'bigint' &&
        (body as { error: bigint }).error >= -INT32 &&
        (body as { error: bigint }).error < INT32 &&
        typeof (body as Json).message === 'string' &&
        ((body as Json).message as string).trim() !== '';
      if (!shaped) violation('error answer not exactly {error: int32, message: string}', where);
      else {
        try {
          expectNoInternalDetail((body as { message: string }).message);
        } catch {
          violation('internal detail in an error message', where);
        }
        const value = Number((body as { error: bigint }).error);
        if (Math.floor(value / 100) !== received.status) violation('error value that does not match the status', where);
      }
    } else if (received.bytes.length > 0) violation('HEAD answer with a body', where);
  }
  return true;
}

/** The plant id a DELETE path means by the server's rule (percent-decoded, decimal int64), if any. */
function deletedId(rawPath: string): bigint | undefined {
  const path = resolvedPath(rawPath);
  const match = path === undefined ? null : /^\/api\/plants\/([^/]+)$/.exec(path);
  if (!match) return undefined;
  try {
    const segment = decodeURIComponent(match[1]!);
    return /^-?\d{1,20}$/.test(segment) ? BigInt(segment) : undefined;
  } catch {
    return undefined;
  }
}

/** Checks a create's answer against what the oracle expects, and keeps what was acknowledged. */
function checkCreate(sent: Sent, received: Received, expectation: Expectation, intended: SentPlant | undefined): void {
  const where = `${describeSent(sent)}\n    ${describeReceived(received)}`;
  if (received.status === 200) {
    let body: unknown;
    try {
      body = parseLossless(received.text);
    } catch {
      body = undefined;
    }
    if (expectation === 'refused') violation('accepted (200) a create the contract refuses', where);
    const plant = body as SentPlant | undefined;
    if (!plant || typeof plant !== 'object' || typeof plant.id !== 'bigint') {
      violation('200 to a create without a Plant body', where);
      return;
    }
    const problems = plantProblems(plant, fields);
    if (problems.length > 0) violation('a create answered with a plant that breaks the Plant rules', `${where}\n    ${problems.join('; ')}`);
    if (intended && JSON.stringify(plant, (_, value) => (typeof value === 'bigint' ? String(value) : value)) !== JSON.stringify(intended, (_, value) => (typeof value === 'bigint' ? String(value) : value))) {
      violation('a create answered (and stored) a plant other than the one sent', `${where}\n    sent ${JSON.stringify(intended, (_, value) => (typeof value === 'bigint' ? String(value) : value))}`);
    }
    acknowledged.set(plant.id, plant);
    return;
  }
  if (received.status >= 200 && received.status < 300) violation(`create answered ${received.status}`, where);
  if (expectation === 'ok') {
    const taken = intended !== undefined && acknowledged.has(intended.id) && received.status === 400 && /"error":40006\b/.test(received.text);
    if (!taken) violation('refused a create the contract accepts', where);
  }
}


// ---------------------------------------------------------------------------------------------------------

let document: { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: Json }> } }>> };
type NewPlantSchema = { properties: Record<string, { type: string; format?: string; maxLength?: number }>; required: string[]; additionalProperties: boolean };
let newPlant: NewPlantSchema;
/** The plant's fields besides the id, as the served document declares them: what the generators mutate and the oracle judges. */
let fields: TextField[] = [];

beforeAll(async () => {
  memberToken = (await server.createToken('fuzz-member', 'member')).token;
  port = Number(new URL(server.baseUrl).port);
  const response = await fetch(`${server.baseUrl}/api/openapi.json`);
  document = (await response.json()) as typeof document;
  newPlant = inlineRefs(document, document.paths['/plants']!.post!.requestBody!.content['application/json']!.schema) as NewPlantSchema;
  fields = textFieldsOf(newPlant);
  console.log(`[fuzz] seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`);
});

afterAll(() => {
  const statuses = [...statusCounts].sort().map(([status, count]) => `${count} × ${status}`).join(', ');
  console.log(`[fuzz] ${casesRun} cases answered (${requestsSent} requests sent), ${fiveHundreds} 5xx; the most one request cost the server: ${mostExpensive.toFixed(1)} ms; statuses: ${statuses}`);
  if (violations.size > 0) console.log(`[fuzz] violations:\n${summary().join('\n')}`);
});

function summary(): string[] {
  return [...violations].map(([kind, { count, example }]) => `- ${kind}: ${count} ×, e.g.\n    ${example}`);
}

/** Expects no violation of the kinds a property added since `before`. */
function expectNoNewViolations(before: Map<string, number>): void {
  const added = [...violations].filter(([kind, { count }]) => count > (before.get(kind) ?? 0)).map(([kind, { count, example }]) => `- ${kind}: ${count - (before.get(kind) ?? 0)} ×, e.g.\n    ${example}`);
  expect(added, `seed ${SEED}`).toEqual([]);
}

const snapshot = () => new Map([...violations].map(([kind, { count }]) => [kind, count]));

async function runProperty<T>(name: string, arbitrary: fc.Arbitrary<T>, numRuns: number, body: (value: T) => Promise<void>): Promise<void> {
  const before = casesRun;
  const startedAt = Date.now();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      await body(value);
    }),
    { numRuns, seed: SEED, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false, endOnFailure: true },
  );
  console.log(`[fuzz] ${name}: ${casesRun - before} cases in ${Date.now() - startedAt} ms`);
}

describe('generated from the OpenAPI document', () => {
  it('has the operations and the NewPlant body the generators are built on', () => {
    // The plant operations; the webhook administration beside them has its own tests (webhooks.test.ts).
    // The CSV import (/plants/imports…) reads files, not plants: import.test.ts sends it hostile ones.
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/plants') && !path.startsWith('/plants/imports'))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    // The CSV export (GET /plants/export) answers text/csv, which the generators do not read; export.test.ts checks it.
    expect(operations.sort()).toEqual(['DELETE /plants/{id}', 'GET /plants', 'GET /plants/export', 'PATCH /plants/{id}', 'POST /plants']);
    // The generators mutate the id and every other field as text of its maxLength (textFieldsOf refuses any other
    // kind); among them, the contract's own.
    expect(newPlant.required).toContain('id');
    expect(newPlant.additionalProperties).toBe(false);
    expect(newPlant.properties.id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(fields).toEqual(expect.arrayContaining([{ name: 'name', optional: false, maxLength: 200 }, { name: 'tag', optional: true, maxLength: 100 }]));
    expect(fields.map((field) => field.name)).toEqual(Object.keys(newPlant.properties).filter((name) => name !== 'id'));
    const listParameters = (document.paths['/plants']!.get!.parameters ?? []).map((parameter) => `${parameter.in}:${parameter.name}`).sort();
    // If-None-Match: the conditional list (docs/api.md, "Conditional lists").
    expect(listParameters).toEqual(['header:If-None-Match', 'query:after', 'query:limit', 'query:owner', 'query:q', 'query:tag']);
    expect((document.paths['/plants/{id}']!.delete!.parameters ?? []).map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual(['path:id']);
  });
});

describe('hostile input', () => {
  it('create bodies: mutated NewPlant documents (types, numbers, unicode, keys, bytes)', { timeout: 90_000 }, async () => {
    const before = snapshot();
    await runProperty('create bodies', bodyCase(fields), 450, async (body) => {
      const sent: Sent = {
        method: 'POST',
        path: '/api/plants',
        headers: [['Host', `127.0.0.1:${port}`], ['Authorization', `Bearer ${server.adminToken}`], ['Content-Type', 'application/json']],
        body: body.bytes,
      };
      const received = await send(sent);
      if (checkCommon(sent, received)) checkCreate(sent, received, body.expectation, body.intended);
    });
    expectNoNewViolations(before);
  });

  it('request lines: methods × paths × queries (path tricks, encodings, long ids)', { timeout: 90_000 }, async () => {
    const before = snapshot();
    const requestLine = fc.record({
      method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'),
      id: ID_SPELLINGS,
      pathIndex: fc.nat(PATHS('1').length - 1),
      query: fc.option(queryArbitrary, { freq: 2 }),
      token: fc.constantFrom('admin', 'member'),
    });
    await runProperty('request lines', requestLine, 450, async ({ method, id, pathIndex, query, token }) => {
      let path = PATHS(id)[pathIndex]!;
      if (query !== null) path += `${path.includes('?') ? '&' : '?'}${query}`;
      const withBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
      const sent: Sent = {
        method,
        path,
        headers: [
          ['Host', `127.0.0.1:${port}`],
          ['Authorization', `Bearer ${token === 'admin' ? server.adminToken : memberToken}`],
          ...(withBody ? ([['Content-Type', 'application/json']] as [string, string][]) : []),
        ],
        body: withBody ? Buffer.from(`{"id": ${4_300n + BigInt(pathIndex)}, "name": "line"}`) : undefined,
      };
      const received = await send(sent);
      if (!checkCommon(sent, received)) return;
      const where = `${describeSent(sent)}\n    ${describeReceived(received)}`;
      const resolved = resolvedPath(path);
      const sentQuery = path.includes('?') ? path.slice(path.indexOf('?') + 1).split('#')[0]! : '';
      if (method === 'GET' && resolved === '/api/plants' && received.status === 200) {
        let plants: unknown;
        try {
          plants = parseLossless(received.text);
        } catch {
          plants = undefined;
        }
        if (!Array.isArray(plants)) violation('a list answered 200 without an array', where);
        else {
          for (const plant of plants) if (plantProblems(plant as Record<string, unknown>, fields).length > 0) violation('a list holds a plant that breaks the Plant rules', where);
          const ids = plants.map((plant: { id: bigint }) => plant.id);
          if (!ids.every((value, index) => index === 0 || ids[index - 1]! < value)) violation('a list not in ascending id order', where);
        }
        if (queryRule(sentQuery) === 'refused') violation('a list query the contract refuses answered 200', where);
      }
      if (method === 'GET' && resolved === '/api/plants' && received.status === 400 && queryRule(sentQuery) === 'ok' && path.startsWith('/api/plants?')) {
        violation('a valid list query refused', where);
      }
      if (method === 'DELETE' && received.status === 204) {
        const deleted = deletedId(path);
        if (deleted === undefined) violation('a delete answered 204 for a path that names no int64 id', where);
        else acknowledged.delete(deleted);
      }
      if (withBody && received.status === 200) {
        try {
          const plant = parseLossless(received.text) as { id: bigint; name: string };
          acknowledged.set(plant.id, plant);
        } catch {
          violation('200 without JSON', where);
        }
      }
    });
    expectNoNewViolations(before);
  });

  it('headers: Content-Type, Authorization (missing, duplicate, odd), long and odd headers, Host', { timeout: 90_000 }, async () => {
    const before = snapshot();
    let nextId = 5_000_000n;
    const headerCase = fc.record({
      operation: fc.constantFrom('create', 'list', 'delete'),
      contentType: fc.constantFrom(...CONTENT_TYPES),
      auth: authCase({ admin: server.adminToken, member: memberToken }),
      extra: fc.subarray(EXTRA_HEADERS, { maxLength: 3 }),
      host: fc.option(hostValue(port), { freq: 3 }),
      chunked: fc.boolean(),
    });
    await runProperty('headers', headerCase, 350, async ({ operation, contentType, auth, extra, host, chunked }) => {
      const id = nextId++;
      const [hostText, hostExpectation] = host === null ? [`127.0.0.1:${port}`, 'ok' as Expectation] : [host[0](), host[1]];
      const headers: [string, string][] = [['Host', hostText], ...auth.headers, ...extra];
      let sent: Sent;
      // An odd Host may reroute the request (see the test of that below): then only the invariants hold.
      let expectation = hostExpectation === 'either' ? 'either' : auth.expectation;
      const transformsBody = extra.some(([name]) => name === 'Content-Encoding');
      if (operation === 'create') {
        if (contentType[0] !== null) headers.push(['Content-Type', contentType[0]]);
        expectation = combine([expectation, contentType[1], transformsBody ? 'either' : 'ok']);
        sent = { method: 'POST', path: '/api/plants', headers, body: Buffer.from(`{"id": ${id}, "name": "header ${id}"}`), chunked };
      } else if (operation === 'list') {
        sent = { method: 'GET', path: '/api/plants?limit=3', headers };
      } else {
        sent = { method: 'DELETE', path: `/api/plants/${id}`, headers };
      }
      const received = await send(sent);
      if (!checkCommon(sent, received)) return;
      const where = `${describeSent(sent)}\n    ${describeReceived(received)}`;
      if (operation === 'create') checkCreate(sent, received, expectation, { id, name: `header ${id}` });
      else if (operation === 'list') {
        // `If-None-Match: *` matches any current list (RFC 9110 §13.1.2): its answer is the 304.
        const answered = extra.some(([name, value]) => name === 'If-None-Match' && value === '*') ? 304 : 200;
        if (expectation === 'ok' && received.status !== answered) violation(`a list with valid headers not answered ${answered}`, where);
        if (expectation === 'refused' && (received.status === 200 || received.status === 304)) violation(`a list with invalid credentials answered ${received.status}`, where);
      } else {
        // Nothing has this id: a valid request is 404 (40401), an unauthenticated one 401; never 204.
        if (received.status === 204) violation('a delete of a missing id answered 204', where);
        if (expectation === 'ok' && received.status !== 404) violation('a delete with valid headers not answered 404 for a missing id', where);
        if (expectation === 'refused' && received.status !== 401) violation('a delete with invalid credentials not answered 401', where);
      }
    });
    expectNoNewViolations(before);
  });
});

/** Every plant in the server's database, read directly: each field's text as raw bytes, so invalid UTF-8 shows. */
async function storedPlants(): Promise<({ id: bigint } & Record<string, Buffer | null>)[]> {
  const asBytes = (column: string) => (server.database.engine === 'sqlite' ? `CAST("${column}" AS BLOB)` : `convert_to("${column}", 'UTF8')`);
  return server.database.query(`SELECT "id", ${fields.map(({ name }) => `${asBytes(name)} AS "${name}"`).join(', ')} FROM "Plant"`);
}

describe('hostile input, by hand', () => {
  const post = (body: string | Buffer, headers: [string, string][] = []) =>
    send({
      method: 'POST',
      path: '/api/plants',
      headers: [['Host', `127.0.0.1:${port}`], ['Authorization', `Bearer ${server.adminToken}`], ['Content-Type', 'application/json'], ...headers],
      body: Buffer.isBuffer(body) ? body : Buffer.from(body),
    });

  it.each([
    ['a name of 199 letters and a lone high surrogate (200 UTF-16 code points by JS count)', 950_001n, `${'a'.repeat(199)}\\ud800`, 'name'],
    ['a name of 150 letters and 50 lone surrogates', 950_002n, `${'a'.repeat(150)}${'\\udc00'.repeat(50)}`, 'name'],
    ['a tag of one lone surrogate', 950_003n, '\\ud800', 'tag'],
  ])('never stores %s changed: it is refused (400) or kept exactly', async (_, id, escaped, field) => {
    const body = field === 'name' ? `{"id": ${id}, "name": "${escaped}"}` : `{"id": ${id}, "name": "surrogate", "tag": "${escaped}"}`;
    const received = await post(body);
    expect(typeof received === 'object' && received !== null, String(received)).toBe(true);
    const answer = received as Received;
    const sentValue = JSON.parse(`"${escaped}"`) as string;
    if (answer.status === 200) {
      const plant = parseLossless(answer.text) as Record<string, string>;
      acknowledged.set(id, plant as unknown as SentPlant);
      expect(plant[field], `the ${field} answered (and stored) for ${body.slice(0, 80)}…`).toBe(sentValue);
    } else {
      expect(answer.status, answer.text).toBe(400);
      expect((await storedPlants()).some((plant) => plant.id === id), `plant ${id} is stored although its create was answered ${answer.status} ${answer.text}`).toBe(false);
    }
  });

  // Refusals Node's HTTP layer makes before the app sees the request: still failures under /api.
  it.each([
    ['a header section beyond 16 KiB', [['X-Filler', 'x'.repeat(20_000)]]],
    ['an Expect header other than 100-continue', [['Expect', 'x-unknown']]],
    ['a Transfer-Encoding that does not end in chunked', [['Transfer-Encoding', 'gzip']]],
    ['a raw non-ASCII byte in the path', [], '/api/plants/1\u00e9'],
  ] as [string, [string, string][], string?][])('answers %s with a JSON error body, not a bare status line', async (_, extra, path = '/api/plants') => {
    const received = await send({
      method: 'POST',
      path,
      headers: [['Host', `127.0.0.1:${port}`], ['Authorization', `Bearer ${server.adminToken}`], ['Content-Type', 'application/json'], ...extra],
      body: Buffer.from('{"id": 970001, "name": "framing"}'),
    });
    expect(typeof received === 'object' && received !== null, String(received)).toBe(true);
    const answer = received as Received;
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(String(answer.headers['content-type'] ?? '(none)'), describeReceived(answer)).toMatch(/^application\/json/);
    expect(Object.keys(parseLossless(answer.text || 'null') ?? {}).sort(), describeReceived(answer)).toEqual(['error', 'message']);
  });

  it.each([
    ['GET', '/api/plants?constructor=1', 200],
    ['GET', '/api/plants?__proto__=1&limit=1', 200],
    ['GET', '/api/plants?toString=x', 200],
    ['DELETE', '/api/plants/970002?valueOf=1', 404],
    ['DELETE', '/api/plants/970003?hasOwnProperty=1', 404],
  ] as [string, string, number][])('ignores an unknown query parameter named after an Object property: %s %s → %i', async (method, path, status) => {
    const received = (await send({ method, path, headers: [['Host', `127.0.0.1:${port}`], ['Authorization', `Bearer ${server.adminToken}`]] })) as Received;
    expect(received.status, `${method} ${path} ${describeReceived(received)}`).toBe(status);
  });

  it.each(['TRACE', 'CONNECT'])('answers %s /api/plants with 405 (error 40500) and Allow, not a 5xx', async (method) => {
    const received = await send({ method, path: '/api/plants', headers: [['Host', `127.0.0.1:${port}`], ['Authorization', `Bearer ${server.adminToken}`]] });
    expect(typeof received === 'object' && received !== null, String(received)).toBe(true);
    const answer = received as Received;
    expect(answer.status, describeReceived(answer)).toBe(405);
    expect(answer.headers.allow, 'Allow').toBeDefined();
    expect(parseLossless(answer.text)).toMatchObject({ error: 40500n });
  });

  it('answers a method HTTP parsing does not know (TRACK) with 400 (error 40010), not a 5xx', async () => {
    const received = await send({ method: 'TRACK', path: '/api/plants', headers: [['Host', `127.0.0.1:${port}`]] });
    const answer = received as Received;
    expect(answer.status, describeReceived(answer)).toBe(400);
    expect(parseLossless(answer.text)).toMatchObject({ error: 40010n });
  });

  it.each(['a@b', 'user:pw@127.0.0.1', '127.0.0.1:99999', '[::1', 'x y'])('answers a malformed Host header (%s) with a 4xx JSON error, not a 5xx', async (host) => {
    const received = await send({ method: 'GET', path: '/api/plants', headers: [['Host', host], ['Authorization', `Bearer ${server.adminToken}`]] });
    const answer = received as Received;
    expect(answer.status, describeReceived(answer)).toBeLessThan(500);
  });

  it('routes by the request line alone: a Host header cannot turn DELETE /api/health into a delete of a plant', async () => {
    const id = 960_001n;
    expect(((await post(`{"id": ${id}, "name": "host victim"}`)) as Received).status).toBe(200);
    acknowledged.set(id, { id, name: 'host victim' });
    const received = (await send({
      method: 'DELETE',
      path: '/api/health',
      headers: [['Host', `127.0.0.1:${port}/api/plants/${id}#`], ['Authorization', `Bearer ${server.adminToken}`]],
    })) as Received;
    const listed = await server.admin.get(`/api/plants?after=${id - 1n}&limit=1`);
    expect(listed.json.map((plant: { id: bigint }) => plant.id), 'the plant is still there').toEqual([id]);
    // Such a Host is no host name: refused outright (400, error 40010), before any routing.
    expect(received.status, `DELETE /api/health with Host: …/api/plants/${id}# ${describeReceived(received)}`).toBe(400);
    expect(parseLossless(received.text)).toMatchObject({ error: 40010n });
  });
});

describe('after the run', () => {
  it('stores only plants that keep the Plant rules, each exactly as its create was answered (read from the database)', async () => {
    const rows = await storedPlants();
    const decode = (bytes: Buffer) => (isUtf8(bytes) ? bytes.toString('utf8') : undefined);
    const broken: string[] = [];
    const unacknowledged: string[] = [];
    const changed: string[] = [];
    for (const row of rows) {
      const notUtf8 = fields.find(({ name }) => row[name] !== null && decode(row[name]!) === undefined);
      if (notUtf8) {
        const bytes = row[notUtf8.name]!;
        broken.push(`${row.id}: a ${notUtf8.name} that is not UTF-8 (${bytes.length} bytes, ending ${bytes.subarray(-8).toString('hex')})`);
        continue;
      }
      const plant: SentPlant = { id: row.id, ...Object.fromEntries(fields.flatMap(({ name }) => (row[name] === null ? [] : [[name, decode(row[name]!)!]]))) };
      const problems = plantProblems(plant, fields);
      if (problems.length > 0) broken.push(`${row.id}: ${problems.join('; ')}`);
      const answered = acknowledged.get(row.id);
      if (!answered) unacknowledged.push(String(row.id));
      else if (fields.some(({ name }) => answered[name] !== plant[name])) changed.push(String(row.id));
    }
    console.log(`[fuzz] ${rows.length} plants stored after the run; ${broken.length} break the Plant rules; ${unacknowledged.length} were never answered 200`);
    expect(broken.slice(0, 10), 'stored plants that break the Plant rules').toEqual([]);
    expect(unacknowledged.slice(0, 10), 'stored plants no create was answered 200 for').toEqual([]);
    expect(changed.slice(0, 10), 'stored plants that differ from their create answer').toEqual([]);
  });

  it('can still list every plant, page by page, for the admin', { timeout: 60_000 }, async () => {
    let next: string | undefined = '/api/plants?limit=50';
    let listed = 0;
    for (let pages = 0; next !== undefined && pages < 1_000; pages++) {
      const response = await server.rawClient(server.adminToken).get(next);
      expect(response.status, `a page of the admin's list: ${next}\n${response.text.slice(0, 300)}`).toBe(200);
      listed += (response.json as unknown[]).length;
      next = nextLink(response);
    }
    expect(listed).toBe((await storedPlants()).length);
  });
});
