import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';

import type { TraceExporterName, TracingSettings } from './tracing-settings';

/** What a request span needs of the front's request (http/request.ts's FrontRequest fits it). */
type TracedRequest = {
  method: string;
  id: string;
  raw: { url?: string; headers: IncomingHttpHeaders };
  trace: { door?: string; userId?: number; traceId?: string };
};

/** What a delivery span records of an attempt's outcome (webhooks/delivery/http-attempt.ts's AttemptResult fits it). */
type AttemptOutcome = { ok: boolean; status: number | null; error: string | null };

/**
 * Traces (OpenTelemetry), off unless the standard variables ask for them. This file is what the server always
 * loads: the few calls the front, the procedures and the webhook sender make, each a plain function call while
 * tracing is off (the tracer below is unset, nothing else runs). The SDK, its exporters and Prisma's
 * instrumentation are in tracing-sdk.ts, loaded only when tracing is on (their own chunk of the bundle).
 *
 * One trace per request: the front's server span (`GET /api/plants/{id}`), the door's span (`door rest`), the
 * procedure's (`plants.delete`), and Prisma's spans (`prisma:client:operation`, `prisma:client:db_query`, …)
 * under it, each the child of the one before. An incoming `traceparent` (a proxy's or a client's trace) is
 * continued. The trace id is in the request's log line. Each webhook attempt is a trace of its own (the
 * outbox row that caused it holds no trace context) whose `traceparent` goes to the receiver.
 */

export type { TraceExporterName, TracingSettings } from './tracing-settings';

/**
 * Where spans go, or none (tracing off). The specification makes `otlp` the default exporter of an SDK that is
 * installed; this server has the SDK built in for everyone, so it asks for a sign first: `OTEL_TRACES_EXPORTER`
 * naming an exporter, or an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or `…_TRACES_ENDPOINT`), which
 * implies `otlp`. `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it off whatever else is set.
 */
export function traceExporters(settings: TracingSettings): TraceExporterName[] {
  if (settings.OTEL_SDK_DISABLED === 'true') return [];
  const named = settings.OTEL_TRACES_EXPORTER;
  if (named !== undefined) return named.includes('none') ? [] : [...new Set(named as TraceExporterName[])];
  return settings.OTEL_EXPORTER_OTLP_ENDPOINT || settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? ['otlp'] : [];
}

export type Tracing = { exporters: string[]; shutdown: () => Promise<void> };

/** Set once by startTracing: while it is unset, every function below only runs what it is given. */
let tracer: Tracer | undefined;
/** Runs `run` with the next span taking these ids (a webhook attempt's, chosen where it was sent). */
let withIds: (<T>(ids: { traceId: string; spanId: string }, run: () => T) => T) | undefined;

/**
 * Starts the SDK when the settings ask for traces (resolves to null when they do not). `exporter` replaces
 * the configured ones, spans exported as each ends (the tests' in-memory exporter).
 */
export async function startTracing(settings: TracingSettings, options: { exporter?: SpanExporter } = {}): Promise<Tracing | null> {
  const exporters = options.exporter ? ['test'] : traceExporters(settings);
  if (exporters.length === 0 || tracer) return null;
  const { startTracingSdk } = await import('./tracing-sdk');
  const started = await startTracingSdk(settings, traceExporters(settings), options.exporter);
  tracer = started.tracer;
  withIds = started.withIds;
  return { exporters, shutdown: started.shutdown };
}

const PATH_SHOWN = 200;
/**
 * `url.path` is the path alone: the query holds what a client searched for (`q`), a tRPC call's whole input,
 * and traces go to a collector that keeps them longer, and shows them to more people, than the API would.
 */
function shownPath(target: string): string {
  const query = target.indexOf('?');
  const path = query === -1 ? target : target.slice(0, query);
  return path.length > PATH_SHOWN ? `${path.slice(0, PATH_SHOWN)}…` : path;
}

/** Ends `span` with the error status when `failed`. */
function end(span: Span, failed: boolean, message?: string): void {
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  span.end();
}

/**
 * The front's span: from the request's arrival to its answer (or the client leaving), named and labelled
 * with the route once the door is known. Continues the caller's `traceparent`; puts the trace id in the
 * request's log line.
 */
export function inRequestSpan<R extends TracedRequest>(request: R, response: ServerResponse, routeOf: (request: R) => string, handle: () => Promise<void>): Promise<void> {
  if (!tracer) return handle();
  const parent = propagation.extract(ROOT_CONTEXT, request.raw.headers);
  const span = tracer.startSpan(
    request.method,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': request.method, 'url.path': shownPath(request.raw.url ?? ''), 'plant_store.request_id': request.id },
    },
    parent,
  );
  request.trace.traceId = span.spanContext().traceId;
  response.once('close', () => {
    const route = routeOf(request);
    const status = response.writableFinished ? response.statusCode : 0;
    span.updateName(`${request.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'http.response.status_code': status, 'plant_store.door': request.trace.door ?? 'front' });
    if (request.trace.userId !== undefined) span.setAttribute('enduser.id', String(request.trace.userId));
    end(span, status >= 500 || status === 0, status === 0 ? 'the client left before the answer' : undefined);
  });
  return context.with(trace.setSpan(parent, span), handle);
}

/** Runs `run` in a span of its own, the child of the active one; an exception ends it as an error. */
async function inSpan<T>(name: string, kind: SpanKind, attributes: Record<string, string | number>, run: (span: Span) => Promise<T>, failed?: (result: T) => boolean): Promise<T> {
  return tracer!.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      const result = await run(span);
      end(span, failed?.(result) ?? false);
      return result;
    } catch (error) {
      end(span, true, error instanceof Error ? error.name : undefined);
      throw error;
    }
  });
}

/** The door's span, inside the front's: its guards (token, body, turn) and its call(s), named once the door is known. */
export function inDoorSpan(request: TracedRequest, run: () => Promise<void>): Promise<void> {
  if (!tracer) return run();
  return inSpan('door', SpanKind.INTERNAL, {}, async (span) => {
    try {
      await run();
    } finally {
      span.updateName(`door ${request.trace.door ?? 'front'}`);
    }
  });
}

/** A procedure's span (called from the guard every procedure has: its caller, trpc/init.ts), the parent of its queries. */
export function inProcedureSpan<T extends { ok: boolean }>(path: string, type: string, run: () => Promise<T>): Promise<T> {
  if (!tracer) return run();
  return inSpan(path, SpanKind.INTERNAL, { 'rpc.system': 'trpc', 'rpc.method': path, 'plant_store.procedure.type': type }, run, (result) => !result.ok);
}

export type DeliveryAttempt = { endpointId: number; deliveryId: number; eventId: string; eventType: string; attempt: number; url: string };

/**
 * Runs `run` outside whatever trace is active: for work a request only sets off (the delivery worker woken
 * by a commit), whose database calls would otherwise be exported as that request's spans.
 */
export function outsideAnyTrace<T>(run: () => T): T {
  return tracer ? context.with(ROOT_CONTEXT, run) : run();
}

/** Whether spans are recorded: the sending thread then gives each attempt a `traceparent` of its own. */
export const tracingOn = () => tracer !== undefined;

/**
 * A webhook attempt that the sending thread made (webhooks/delivery/thread-entry.ts), as a client span of a trace of its
 * own: with the ids its `traceparent` carried and the times it took.
 */
export function recordDeliverySpan(attempt: DeliveryAttempt, sent: { trace: { traceId: string; spanId: string }; startedAt: number; endedAt: number; result: AttemptOutcome }): void {
  if (!tracer || !withIds) return;
  const span = withIds(sent.trace, () =>
    tracer!.startSpan(`webhook ${attempt.eventType}`, { kind: SpanKind.CLIENT, attributes: deliveryAttributes(attempt), startTime: sent.startedAt }, ROOT_CONTEXT),
  );
  const { result } = sent;
  if (result.status !== null) span.setAttribute('http.response.status_code', result.status);
  if (result.error !== null) span.setAttribute('error.type', result.status === null ? 'no answer' : String(result.status));
  if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(sent.endedAt);
}

function deliveryAttributes(attempt: DeliveryAttempt): Record<string, string | number> {
  const target = URL.canParse(attempt.url) ? new URL(attempt.url) : undefined;
  return {
    'http.request.method': 'POST',
    ...(target ? { 'server.address': target.hostname, 'server.port': Number(target.port || (target.protocol === 'https:' ? 443 : 80)) } : {}),
    'plant_store.webhook.endpoint_id': attempt.endpointId,
    'plant_store.webhook.delivery_id': attempt.deliveryId,
    'plant_store.webhook.event_id': attempt.eventId,
    'plant_store.webhook.attempt': attempt.attempt,
  };
}
