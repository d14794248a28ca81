/**
 * The OTEL_* settings tracing reads, declared here so observability/ stands below config.ts (whose parsed
 * configuration fits this as it is) and so tracing.ts and tracing-sdk.ts share them without importing each other.
 */
export type TracingSettings = {
  OTEL_SDK_DISABLED: 'true' | 'false';
  OTEL_TRACES_EXPORTER?: string[];
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_PROTOCOL?: string;
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: string;
  OTEL_SERVICE_NAME: string;
};

export type TraceExporterName = 'otlp' | 'console';
