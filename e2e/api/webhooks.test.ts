/**
 * Webhooks through the real server: endpoints managed over REST (the admin procedures' OpenAPI door),
 * events from REST creates and deletes delivered to real receivers on loopback and verified with the
 * standardwebhooks package, a receiver that is down and comes back, a receiver answering 500 (the
 * backoff schedule, "retry now"), the delivery log, secret rotation and the health counts. Then the SSRF
 * guard on a server with WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE unset. Runs on both engines.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';

import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

import { expectError, expectStatus, idSource, plantBody, setupServer } from '@test-support/api-fixture';
import { rawExchange, rawRequest } from '@test-support/http-client';
import { eventually, OPERATOR_TOKEN, plantIdOf, registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';

const server = setupServer({ env: webhookEnv() });
const nextId = idSource(90_000n);
const receivers: Receiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(port?: number): Promise<Receiver> {
  const started = await startReceiver(port);
  receivers.push(started);
  return started;
}

const deliveriesOf = async (endpointId: number, query = '') => {
  const response = await server.admin.get(`/api/webhooks/endpoints/${endpointId}/deliveries?limit=100${query}`);
  expectStatus(response, 200);
  return response.json as { id: bigint; type: string; status: string; attempts: bigint; lastStatus: bigint | null; lastError: string | null; lastResponse: string | null; nextAttemptAt: string | null }[];
};

const health = async () => (await server.anonymous.get('/api/health', { authorization: `Bearer ${OPERATOR_TOKEN}` })).json.webhooks as { pending: bigint; failing: bigint; failed: bigint };

describe('webhook endpoints over REST', () => {
  it('are managed by admins: register (secret shown once), list, change, test, delete; members get 403', async () => {
    const hook = await receiver();
    const member = server.client((await server.createToken('hooks-member')).token);
    expectError(await member.get('/api/webhooks/endpoints'), 'forbidden');
    expectError(await member.post('/api/webhooks/endpoints', JSON.stringify({ url: hook.url, events: ['plant.created'] })), 'forbidden');

    const created = await server.admin.post('/api/webhooks/endpoints', JSON.stringify({ url: hook.url, events: ['plant.created'], description: 'receiver' }));
    expectStatus(created, 200);
    expect(created.json).toMatchObject({ url: hook.url, events: ['plant.created'], enabled: true, description: 'receiver', pending: 0n, failed: 0n });
    expect(created.json.secret).toMatch(/^whsec_/);
    const id = created.json.id as bigint;

    const listed = await server.admin.get('/api/webhooks/endpoints');
    expectStatus(listed, 200);
    expect(listed.text).not.toContain(created.json.secret);
    expect(listed.json.map((endpoint: { id: bigint }) => endpoint.id)).toContain(id);

    const changed = await server.admin.request('PATCH', `/api/webhooks/endpoints/${id}`, { body: JSON.stringify({ events: ['plant.deleted', 'plant.created'] }), contentType: 'application/merge-patch+json' });
    expectStatus(changed, 200);
    expect(changed.json.events).toEqual(['plant.created', 'plant.deleted']);

    const test = await server.admin.post(`/api/webhooks/endpoints/${id}/test`, '{}');
    expectStatus(test, 200);
    expect(test.json).toMatchObject({ type: 'webhook.test', status: 'pending' });
    const [request] = await hook.waitFor(1);
    expect(new Webhook(created.json.secret).verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({ type: 'webhook.test', data: { endpointId: Number(id) } });

    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
    expectError(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 'webhookEndpointNotFound');
    expectError(await server.admin.get('/api/webhooks/endpoints/abc'), 'invalidPathParameter');
    expectError(await server.admin.post('/api/webhooks/deliveries/999999/retry', '{}'), 'webhookDeliveryNotFound');
  });
});

describe('delivery', () => {
  it('sends each create and delete, signed, with the plant exactly as stored', async () => {
    const hook = await receiver();
    const { id, secret } = await registerEndpoint(server.admin, hook.url);
    const big = 9007199254740993n + nextId();
    expectStatus(await server.admin.post('/api/plants', plantBody(big, 'Monstera "deliciosa"', 'tropical')), 200);
    expectStatus(await server.admin.delete(`/api/plants/${big}`), 204);
    const [created, deleted] = await hook.waitFor(2);
    const verifier = new Webhook(secret);
    for (const request of [created!, deleted!]) verifier.verify(request.body, request.headers as Record<string, string>);
    expect(created!.body).toMatch(new RegExp(`^\\{"type":"plant\\.created","timestamp":"[^"]+","data":\\{"id":${big},"name":"Monstera \\\\"deliciosa\\\\"","tag":"tropical"\\}\\}$`));
    expect(deleted!.body).toContain(`"type":"plant.deleted"`);
    expect(plantIdOf(deleted!.body)).toBe(String(big));
    expect(created!.headers['webhook-id']).not.toBe(deleted!.headers['webhook-id']);
    const log = await eventually(() => deliveriesOf(id), (rows) => rows.length === 2 && rows.every((row) => row.status === 'delivered'));
    expect(log.map((row) => [row.type, row.attempts, row.lastStatus])).toEqual([
      ['plant.deleted', 1n, 204n],
      ['plant.created', 1n, 204n],
    ]);
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });

  it('delivers every event, in order, to a receiver that was down for a while and came back', async () => {
    const first = await receiver();
    const { port, url } = first;
    await first.close();
    const { id, secret } = await registerEndpoint(server.admin, url);
    const ids = Array.from({ length: 6 }, () => nextId());
    for (const plantId of ids) expectStatus(await server.admin.post('/api/plants', plantBody(plantId, 'while down')), 200);
    // The first attempts fail (connection refused); the endpoint is seen as failing.
    const failing = await eventually(() => deliveriesOf(id), (rows) => rows.some((row) => row.attempts >= 2n), 15_000, 'two failed attempts');
    expect(failing.find((row) => row.attempts >= 2n)).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'the connection was refused' });
    // /api/health keeps its counts for a second: they catch up with the rows, they are not read with them.
    await eventually(health, (counts) => counts.failing === 1n && counts.pending >= 6n, 10_000, 'the endpoint counted as failing, six deliveries pending');

    const back = await receiver(port);
    const got = await back.waitFor(6, 20_000);
    expect(got.map((request) => plantIdOf(request.body))).toEqual(ids.map(String));
    for (const request of got) new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    await eventually(health, (counts) => counts.pending === 0n && counts.failing === 0n, 10_000, 'no pending or failing webhooks');
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });

  it('backs off exponentially from a receiver answering 500, shows it in the log, and retries now on request', async () => {
    const hook = await receiver();
    let failing = true;
    hook.answer(() => (failing ? { status: 500, body: '<b>down</b>' } : { status: 200 }));
    const { id } = await registerEndpoint(server.admin, hook.url, ['plant.created']);
    expectStatus(await server.admin.post('/api/plants', plantBody(nextId(), 'refused')), 200);
    const got = await hook.waitFor(6, 20_000);
    const gaps = got.slice(1).map((request, index) => request.at - got[index]!.at);
    // 100, 200, 400, 800, 1600 ms (±20 %), plus the time each attempt takes on a busy machine.
    gaps.forEach((gap, index) => {
      const expected = 100 * 2 ** index;
      expect(gap, `waits ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(expected * 0.8 - 5);
      expect(gap, `waits ${gaps.join(', ')} ms`).toBeLessThan(expected * 1.2 + 1_500);
    });
    console.log(`[webhooks] waits between attempts to a receiver answering 500: ${gaps.join(', ')} ms (base 100 ms)`);
    const [row] = await eventually(() => deliveriesOf(id), (rows) => rows[0]?.attempts === 6n);
    expect(row).toMatchObject({ status: 'pending', lastStatus: 500n, lastError: 'answered 500' });
    expect(Date.parse(row!.nextAttemptAt!)).toBeGreaterThan(Date.now() + 1_000);

    // "Retry now" instead of waiting 3.2 s.
    failing = false;
    const askedAt = Date.now();
    const retried = await server.admin.post(`/api/webhooks/deliveries/${row!.id}/retry`, '{}');
    expectStatus(retried, 200);
    await hook.waitFor(7);
    expect(hook.received[6]!.at - askedAt).toBeLessThan(2_500);
    await eventually(() => deliveriesOf(id), (rows) => rows[0]?.status === 'delivered');
    const log = await deliveriesOf(id, '&status=delivered');
    expect(log).toEqual([expect.objectContaining({ attempts: 7n, lastStatus: 200n })]);
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });

  it('writes down an answer with a NUL byte and bytes that are not UTF-8 as text, and backs off from it (PostgreSQL refused it, and the server resent at once, forever)', async () => {
    const hook = await receiver();
    hook.answer(() => ({ status: 500, body: Buffer.from([0x6e, 0x6f, 0x00, 0xff, 0x21]) }));
    const { id } = await registerEndpoint(server.admin, hook.url, ['plant.created']);
    expectStatus(await server.admin.post('/api/plants', plantBody(nextId(), 'answered with NUL')), 200);
    const rows = await eventually(() => deliveriesOf(id), (all) => (all[0]?.attempts ?? 0n) >= 3n, 15_000, 'three attempts written down');
    expect(rows[0]).toMatchObject({ status: 'pending', lastStatus: 500n, lastResponse: 'no\uFFFD\uFFFD!' });
    const gaps = hook.received.slice(1, 3).map((request, index) => request.at - hook.received[index]!.at);
    expect(gaps[0], `waits ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(100 * 0.8 - 5);
    expect(gaps[1], `waits ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(200 * 0.8 - 5);
    expect(server.log()).not.toContain('22021');
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const hook = await receiver();
    const { id, secret } = await registerEndpoint(server.admin, hook.url, ['plant.created']);
    const rotated = await server.admin.post(`/api/webhooks/endpoints/${id}/rotate-secret`, '{}');
    expectStatus(rotated, 200);
    expect(rotated.json.secret).not.toBe(secret);
    expectStatus(await server.admin.post('/api/plants', plantBody(nextId(), 'rotated')), 200);
    const [request] = await hook.waitFor(1);
    expect(String(request!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const each of [secret, rotated.json.secret as string]) new Webhook(each).verify(request!.body, request!.headers as Record<string, string>);
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });
});

describe('operations that declare no request body (rotate-secret, test, retry)', () => {
  // The document declares no body for them, so a generated client sends none: no Content-Type, and a
  // Content-Length of 0, no length at all, or an empty chunked body.
  it('take no body, an empty one with or without a Content-Type, and {}', async () => {
    const hook = await receiver();
    const { id } = await registerEndpoint(server.admin, hook.url);
    const test = `/api/webhooks/endpoints/${id}/test`;
    const authorization = `Bearer ${server.adminToken}`;
    const host = new URL(server.baseUrl).host;

    const noLength = await rawExchange(server.baseUrl, `POST ${test} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${authorization}\r\nConnection: close\r\n\r\n`);
    expect([noLength.status, noLength.text], 'no Content-Type, no Content-Length').toEqual([200, expect.stringContaining('"type":"webhook.test"')]);
    const chunked = await rawRequest(server.baseUrl, { method: 'POST', path: test, headers: { authorization, 'transfer-encoding': 'chunked' }, chunks: [] });
    expect([chunked.status, chunked.json?.type], 'an empty chunked body').toEqual([200, 'webhook.test']);
    expectStatus(await server.admin.request('POST', test), 200);
    expectStatus(await server.admin.request('POST', test, { body: '', contentType: 'application/json' }), 200);
    expectStatus(await server.admin.request('POST', test, { body: '', contentType: 'text/plain' }), 200);
    expectStatus(await server.admin.post(test, '{}'), 200);
    await hook.waitFor(6);

    const rotated = await server.admin.request('POST', `/api/webhooks/endpoints/${id}/rotate-secret`);
    expectStatus(rotated, 200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    // Reaching the procedure: the delivery does not exist.
    expectError(await server.admin.request('POST', '/api/webhooks/deliveries/999999/retry'), 'webhookDeliveryNotFound');
    expectStatus(await server.admin.delete(`/api/webhooks/endpoints/${id}`), 204);
  });

  it('refuse a body with content as a JSON body is refused, and any member of it by name', async () => {
    const test = '/api/webhooks/endpoints/1/test';
    expectError(await server.admin.post(test, '{"note": "hello", "id": 2}'), 'unknownField', /"note", "id".*takes no body/);
    expectError(await server.admin.post(test, '[]'), 'bodyNotObject');
    expectError(await server.admin.post(test, 'hello'), 'invalidJson');
    expectError(await server.admin.post(test, 'hello', { contentType: 'text/plain' }), 'unsupportedMediaType');
    expectError(await server.admin.post('/api/webhooks/deliveries/1/retry', JSON.stringify({ ['x'.repeat(5000)]: 1 })), 'unknownField', /takes no body/);
  });
});

describe('the SSRF guard, with WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE unset (and webhooks off: no WEBHOOKS_SECRET_KEY)', () => {
  const strict = setupServer();

  it('refuses loopback, link-local and private targets in any spelling, and non-https URLs', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'https://127.0.0.1/hook',
      'https://2130706433/',
      'https://[::1]/',
      'https://[::ffff:127.0.0.1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://10.0.0.5/',
      'https://localhost/',
      'https://user:secret@93.184.215.14/',
      'https://93.184.215.14:25/',
    ]) {
      expectError(await strict.admin.post('/api/webhooks/endpoints', JSON.stringify({ url, events: ['plant.created'] })), 'webhookUrlNotAllowed');
    }
  });

  it('answers 503 for an allowed URL while webhooks are off', async () => {
    expectError(await strict.admin.post('/api/webhooks/endpoints', JSON.stringify({ url: 'https://93.184.215.14/hook', events: ['plant.created'] })), 'webhooksNotConfigured', 'WEBHOOKS_SECRET_KEY');
    expect((await strict.admin.get('/api/webhooks/endpoints')).json).toEqual([]);
  });
});
