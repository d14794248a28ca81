/**
 * Traces from the built server, on the suite's engine, sent as OTLP/HTTP JSON to a collector in this test
 * (the standard variables only): a create is one trace from the front to Prisma's statements, its id is in
 * the request's log line, a search's text (the query) is in no span, and the webhook the create causes reaches its receiver with a `traceparent` of a
 * span the server exported. Without the variables nothing is exported.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { type Receiver, startReceiver } from '@test-support/webhook-receiver';

import { plantBody } from '@test-support/api-fixture';
import { eventually, registerEndpoint, webhookEnv } from '@test-support/webhook-endpoints';
import { testBuildDir } from '@test-support/build';
import { api } from '@test-support/http-client';
import { type RunningServer, startServer } from '@test-support/server-process';

type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: { key: string; value: { stringValue?: string } }[] };

const receivers: Receiver[] = [];
const servers: RunningServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

/** Every span the collector received (OTLP JSON: resourceSpans → scopeSpans → spans). */
function exported(collector: Receiver): OtlpSpan[] {
  return collector.received
    .filter((request) => request.path === '/v1/traces')
    .flatMap((request) => (JSON.parse(request.body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] }).resourceSpans)
    .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
}

describe('traces from the built server (OTLP/HTTP)', () => {
  it('export a create as one trace, put its id in the log line, and send the webhook’s traceparent', { timeout: 120_000 }, async () => {
    const collector = await startReceiver();
    const hooks = await startReceiver();
    receivers.push(collector, hooks);
    const server = await startServer({
      env: webhookEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      }),
    });
    servers.push(server);
    const admin = api(server.baseUrl, server.adminToken);
    await registerEndpoint(admin, hooks.url, ['plant.created']);

    const created = await admin.post('/api/plants', plantBody(31_337n, 'Traced'));
    expect(created.status).toBe(200);
    const requestId = created.headers.get('x-request-id')!;
    const line = await eventually(
      async () => server.log().split('\n').find((entry) => entry.includes(requestId) && entry.includes('"traceId"')),
      (found) => found !== undefined,
      30_000,
      'the create’s log line',
    );
    const traceId = (JSON.parse(line!) as { traceId: string }).traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    const spans = await eventually(
      async () => exported(collector).filter((span) => span.traceId === traceId),
      (found) => found.some((span) => span.name === 'POST /api/plants') && found.some((span) => span.name === 'prisma:client:db_query'),
      30_000,
      'the create’s spans at the collector',
    );
    const byName = (name: string) => spans.find((span) => span.name === name)!;
    expect(byName('door rest').parentSpanId).toBe(byName('POST /api/plants').spanId);
    expect(byName('plants.create').parentSpanId).toBe(byName('door rest').spanId);
    expect(spans.filter((span) => span.name === 'prisma:client:operation').every((span) => span.parentSpanId === byName('plants.create').spanId)).toBe(true);

    // A list's search text is in its query, which no span carries: url.path is the path alone.
    const secret = 'secret-search-text';
    const searched = await admin.get(`/api/plants?q=${secret}&limit=1`);
    expect(searched.status).toBe(200);
    const searchedLine = await eventually(
      async () => server.log().split('\n').find((entry) => entry.includes(searched.headers.get('x-request-id')!) && entry.includes('"traceId"')),
      (found) => found !== undefined,
      30_000,
      'the search’s log line',
    );
    const searchTrace = (JSON.parse(searchedLine!) as { traceId: string }).traceId;
    const list = await eventually(
      async () => exported(collector).find((span) => span.traceId === searchTrace && span.name === 'GET /api/plants'),
      (found) => found !== undefined,
      30_000,
      'the search’s server span',
    );
    expect(list!.attributes?.find((attribute) => attribute.key === 'url.path')?.value.stringValue).toBe('/api/plants');
    expect(collector.received.filter((request) => request.path === '/v1/traces').some((request) => request.body.includes(secret))).toBe(false);

    // The webhook attempt is a span the server exported, and the receiver got its traceparent.
    const delivery = await eventually(async () => hooks.received.find((request) => request.path !== '/v1/traces'), (found) => found !== undefined, 30_000, 'the webhook');
    const traceparent = String(delivery!.headers.traceparent);
    const [, attemptTrace, attemptSpan] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? [];
    expect(attemptTrace, traceparent).toBeDefined();
    await eventually(
      async () => exported(collector).find((span) => span.spanId === attemptSpan),
      (found) => found?.name === 'webhook plant.created' && found.traceId === attemptTrace,
      30_000,
      'the webhook attempt’s span',
    );
  });

  it('leave the SDK out of the server bundle: it is a chunk loaded only when tracing is on', () => {
    const server = readFileSync(path.join(testBuildDir, 'server.mjs'), 'utf8');
    expect(server).not.toContain('BatchSpanProcessor');
    const chunks = readdirSync(testBuildDir).filter((name) => name.endsWith('.mjs'));
    expect(chunks.some((name) => readFileSync(path.join(testBuildDir, name), 'utf8').includes('BatchSpanProcessor'))).toBe(true);
  });
});
