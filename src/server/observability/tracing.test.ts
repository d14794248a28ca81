import type { AddressInfo } from 'node:net';

import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';

import { config } from '@/server/config';
import { createFront } from '@/server/http/front';
import type { PagesDoor } from '@/server/http/pages';
import { startHttpServer } from '@/server/http/server';
import type { Logger } from '@/server/log';
import { appRouter } from '@/server/app-router';
import { signIn } from '@test-support/actors';

import { createFrontObserver } from '@/server/http/observability/front-observer';
import { startTracing, traceExporters, type TracingSettings } from './tracing';

/**
 * Traces through the real front, doors, procedures and the unit database, exported to memory: one request is
 * one trace whose spans are each other's parents, front → door → procedure → Prisma's queries.
 */
const exporter = new InMemorySpanExporter();
const tracing = await startTracing(config(), { exporter });
const logged: Record<string, unknown>[] = [];
const log: Logger = { info: (entry) => logged.push(entry), warn: (entry) => logged.push(entry), error: () => {} };
const noPages: PagesDoor = async (_request, response) => {
  response.statusCode = 404;
  response.end();
};
const front = createFront({
  router: appRouter,
  log,
  observer: createFrontObserver({ router: appRouter, metrics: false }),
  checkHealth: async () => {},
  pages: noPages,
  config: { RATE_LIMIT_PER_TOKEN: null, RATE_LIMIT_AUTH_FAILURES: null, TRUST_PROXY: null, CORS_ALLOWED_ORIGINS: null, PUBLIC_URL: undefined },
});
const running = await startHttpServer(front, { port: 0, hostname: '127.0.0.1', maxConnections: 100, maxConnectionsPerAddress: 1000, trustProxy: null, log });
const base = `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
afterAll(async () => {
  await running.close();
  await tracing?.shutdown();
});

/** The spans of one trace once its server span has ended (it ends when the answer has gone out). */
async function traceOf(requestId: string): Promise<ReadableSpan[]> {
  for (let waited = 0; ; waited += 10) {
    const server = exporter.getFinishedSpans().find((span) => span.attributes['plant_store.request_id'] === requestId);
    if (server) return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === server.spanContext().traceId);
    if (waited > 10_000) throw new Error(`no server span for request ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('traces (OpenTelemetry, in-memory exporter)', () => {
  it('are off unless the standard variables ask for them', () => {
    const none: TracingSettings = {
      OTEL_SDK_DISABLED: 'false',
      OTEL_SERVICE_NAME: 'plant-store',
      OTEL_TRACES_EXPORTER: undefined,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_PROTOCOL: undefined,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: undefined,
    };
    expect(traceExporters(none)).toEqual([]);
    expect(traceExporters({ ...none, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual(['otlp']);
    expect(traceExporters({ ...none, OTEL_TRACES_EXPORTER: ['console'] })).toEqual(['console']);
    expect(traceExporters({ ...none, OTEL_TRACES_EXPORTER: ['none'], OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual([]);
    expect(traceExporters({ ...none, OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: ['otlp'] })).toEqual([]);
  });

  it('make one REST request one trace: front → door → procedure → Prisma queries, each the parent of the next', async () => {
    const { token, caller } = await signIn('traced');
    await caller.plants.create({ id: 424242n, name: 'Traced fern' });
    const response = await fetch(`${base}/api/plants/424242`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(204);
    const spans = await traceOf(response.headers.get('x-request-id')!);

    const server = spans.find((span) => span.name === 'DELETE /api/plants/{id}')!;
    expect(server, spans.map((span) => span.name).join(', ')).toBeDefined();
    expect(parentOf(server)).toBeUndefined();
    expect(server.attributes).toMatchObject({ 'http.route': '/api/plants/{id}', 'http.response.status_code': 204, 'plant_store.door': 'rest' });
    const door = spans.find((span) => span.name === 'door rest')!;
    expect(parentOf(door)).toBe(server.spanContext().spanId);
    const procedure = spans.find((span) => span.name === 'plants.delete')!;
    expect(parentOf(procedure)).toBe(door.spanContext().spanId);
    const operations = spans.filter((span) => span.name === 'prisma:client:operation');
    expect(operations.length).toBeGreaterThan(0);
    for (const operation of operations) expect(parentOf(operation)).toBe(procedure.spanContext().spanId);
    // Prisma's statements sit under its operations.
    const queries = spans.filter((span) => span.name === 'prisma:client:db_query');
    expect(queries.length).toBeGreaterThan(0);
    const ids = new Set(spans.map((span) => span.spanContext().spanId));
    for (const query of queries) expect(ids).toContain(parentOf(query));

    // The request's log line carries the trace id.
    const line = logged.find((entry) => entry.requestId === response.headers.get('x-request-id'));
    expect(line?.traceId).toBe(server.spanContext().traceId);
  });

  it('continue a caller’s trace (traceparent), on the tRPC door too', async () => {
    const { token } = await signIn('traced-trpc');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${base}/api/trpc/plants.list?input=${encodeURIComponent(JSON.stringify({ json: { limit: 1 } }))}`, {
      headers: { Authorization: `Bearer ${token}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);
    const spans = await traceOf(response.headers.get('x-request-id')!);
    const server = spans.find((span) => span.name === 'GET /api/trpc/plants.list')!;
    expect(server.spanContext().traceId).toBe(traceId);
    expect(parentOf(server)).toBe('00f067aa0ba902b7');
    const door = spans.find((span) => span.name === 'door trpc')!;
    const procedure = spans.find((span) => span.name === 'plants.list')!;
    expect(parentOf(procedure)).toBe(door.spanContext().spanId);
  });

  it('record the path without the query: no search text, no tRPC input', async () => {
    const { token } = await signIn('traced-query');
    const secret = 'secret-search-text';
    for (const target of [`/api/plants?q=${secret}&limit=1`, `/api/trpc/plants.list?input=${encodeURIComponent(JSON.stringify({ json: { q: secret } }))}`]) {
      const response = await fetch(`${base}${target}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      const spans = await traceOf(response.headers.get('x-request-id')!);
      const server = spans.find((span) => parentOf(span) === undefined)!;
      expect(server.attributes['url.path']).toBe(target.slice(0, target.indexOf('?')));
      expect(JSON.stringify(spans.map((span) => [span.name, span.attributes, span.events]))).not.toContain(secret);
    }
  });
});
