import type { Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ConsoleSpanExporter, RandomIdGenerator, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { PrismaInstrumentation } from '@prisma/instrumentation';

import type { TraceExporterName, TracingSettings } from './tracing-settings';

/**
 * The OpenTelemetry SDK, loaded only when tracing is on (tracing.ts). The standard variables the SDK reads itself
 * apply: OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT / _COMPRESSION (and their _TRACES_ forms), OTEL_TRACES_SAMPLER
 * and _ARG, OTEL_BSP_* (the batch's size and delay), OTEL_RESOURCE_ATTRIBUTES, OTEL_SPAN_*_LIMIT.
 */
function exporterFor(name: TraceExporterName, settings: TracingSettings): SpanExporter {
  if (name === 'console') return new ConsoleSpanExporter();
  // The exporter reads the endpoint itself: …_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces.
  const protocol = settings.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? settings.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  return protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter();
}

/** Ids of a span already under way elsewhere (a webhook attempt sent by the sending thread), or random ones. */
export type ChosenIds = { traceId: string; spanId: string };

function idsChosenOrRandom(): { generator: RandomIdGenerator; withIds: <T>(ids: ChosenIds, run: () => T) => T } {
  const random = new RandomIdGenerator();
  let chosen: ChosenIds | undefined;
  const generator = Object.assign(Object.create(random) as RandomIdGenerator, {
    generateTraceId: () => chosen?.traceId ?? random.generateTraceId(),
    generateSpanId: () => chosen?.spanId ?? random.generateSpanId(),
  });
  return {
    generator,
    withIds(ids, run) {
      chosen = ids;
      try {
        return run();
      } finally {
        chosen = undefined;
      }
    },
  };
}

export async function startTracingSdk(
  settings: TracingSettings,
  exporters: TraceExporterName[],
  testExporter?: SpanExporter,
): Promise<{ tracer: Tracer; withIds: <T>(ids: ChosenIds, run: () => T) => T; shutdown: () => Promise<void> }> {
  // Batched: a span costs the request a push onto a queue; the export happens on a timer, off the request.
  const spanProcessors: SpanProcessor[] = testExporter
    ? [new SimpleSpanProcessor(testExporter)]
    : exporters.map((name) => new BatchSpanProcessor(exporterFor(name, settings)));
  // The service's name is plant-store unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': settings.OTEL_SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const ids = idsChosenOrRandom();
  const provider = new NodeTracerProvider({ resource, spanProcessors, idGenerator: ids.generator });
  // The API's context (AsyncLocalStorage) and propagator are process-wide by OpenTelemetry's design: Prisma's
  // instrumentation finds the active span through them. W3C Trace Context only: `traceparent` in and out.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  // Prisma 7's client asks a process-wide helper, which enable() sets, for the spans of each query (its design too).
  // `enabled: false` only defers that until the provider is set. (Its base class also hooks `require`, process-wide;
  // in the bundle only Node's built-ins and better-sqlite3 are required at run time, and nothing is patched.)
  const prisma = new PrismaInstrumentation({ enabled: false });
  prisma.setTracerProvider(provider);
  prisma.enable();
  return {
    tracer: provider.getTracer('plant-store'),
    withIds: ids.withIds,
    shutdown: async () => {
      prisma.disable();
      // What is still batched goes out before the process exits.
      await provider.shutdown();
    },
  };
}
