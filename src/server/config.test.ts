import { describe, expect, it } from 'vitest';

import { ConfigError, parseConfig } from './config';

function refusal(environment: Record<string, string>): string {
  try {
    parseConfig(environment);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`${JSON.stringify(environment)} was accepted`);
}

describe('the environment', () => {
  it('has a default for every variable', () => {
    expect(parseConfig({})).toEqual({
      PORT: 3000,
      HOSTNAME_TO_BIND: '0.0.0.0',
      DATABASE_URL: 'file:./data/plants.db',
      DATABASE_POOL_SIZE: 10,
      AUTH_CACHE_TTL_MS: 5000,
      STREAM_STALL_TIMEOUT_MS: 30_000,
      PUBLIC_URL: undefined,
      RATE_LIMIT_PER_TOKEN: { burst: 600, perSecond: 100 },
      RATE_LIMIT_AUTH_FAILURES: { burst: 60, perSecond: 1 },
      TRUST_PROXY: null,
      CORS_ALLOWED_ORIGINS: null,
      LOG_LEVEL: 'info',
      SQLITE_SYNCHRONOUS: 'full',
      MAX_CONNECTIONS: 10_000,
      MAX_CONNECTIONS_PER_ADDRESS: 256,
      SHUTDOWN_DRAIN_MS: 5_000,
      WEBHOOKS_SECRET_KEY: null,
      WEBHOOKS_ALLOW_HTTP: false,
      WEBHOOKS_ALLOW_PRIVATE: false,
      WEBHOOKS_RETRY_BASE_MS: 30_000,
      WEBHOOKS_POLL_MS: 5_000,
      WEBHOOKS_LEASE_MS: 30_000,
      WEBHOOKS_CONCURRENCY: 8,
      METRICS: 'on',
      METRICS_TOKEN: undefined,
      OTEL_SDK_DISABLED: 'false',
      OTEL_TRACES_EXPORTER: undefined,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_PROTOCOL: undefined,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: undefined,
      OTEL_SERVICE_NAME: 'plant-store',
    });
  });

  it('reads what each variable takes', () => {
    expect(
      parseConfig({
        PORT: '8080',
        RATE_LIMIT_PER_TOKEN: 'off',
        RATE_LIMIT_AUTH_FAILURES: '10 / 0.5',
        TRUST_PROXY: '1',
        CORS_ALLOWED_ORIGINS: 'https://a.example, http://localhost:5173',
        PUBLIC_URL: 'https://plants.example.com/',
        SQLITE_SYNCHRONOUS: 'NORMAL',
        DATABASE_URL: 'postgresql://u:p@db:5432/plants',
      }),
    ).toMatchObject({
      PORT: 8080,
      RATE_LIMIT_PER_TOKEN: null,
      RATE_LIMIT_AUTH_FAILURES: { burst: 10, perSecond: 0.5 },
      TRUST_PROXY: 'anyPeer',
      CORS_ALLOWED_ORIGINS: ['https://a.example', 'http://localhost:5173'],
      PUBLIC_URL: 'https://plants.example.com',
      SQLITE_SYNCHRONOUS: 'normal',
    });
    expect(parseConfig({ CORS_ALLOWED_ORIGINS: 'https://a.example,*' }).CORS_ALLOWED_ORIGINS).toBe('*');
    expect(parseConfig({ TRUST_PROXY: ' 10.0.0.2, 192.168.0.0/16 ,2001:db8::/32,loopback' }).TRUST_PROXY).toEqual(['10.0.0.2', '192.168.0.0/16', '2001:db8::/32', 'loopback']);
    expect(parseConfig({ TRUST_PROXY: '0' }).TRUST_PROXY).toBeNull();
    // An empty value counts as unset, as `VAR= npm start` means.
    expect(parseConfig({ PORT: '' }).PORT).toBe(3000);
  });

  it('refuses a bad value, naming the variable, the value and what it takes', () => {
    expect(refusal({ PORT: 'abc' })).toContain('PORT="abc": PORT is a whole number from 0 to 65535');
    expect(refusal({ PORT: '70000' })).toContain('PORT is a whole number from 0 to 65535');
    expect(refusal({ RATE_LIMIT_PER_TOKEN: 'lots' })).toContain('RATE_LIMIT_PER_TOKEN="lots": RATE_LIMIT_PER_TOKEN is BURST/PER_SECOND');
    expect(refusal({ TRUST_PROXY: 'yes' })).toContain('TRUST_PROXY="yes": TRUST_PROXY lists the proxies to trust, as addresses or CIDR ranges');
    expect(refusal({ TRUST_PROXY: '10.0.0.0/33' })).toContain('TRUST_PROXY lists the proxies to trust');
    expect(refusal({ TRUST_PROXY: '10.0.0.1, 2001:db8::/129' })).toContain('TRUST_PROXY lists the proxies to trust');
    expect(refusal({ LOG_LEVEL: 'loud' })).toContain('LOG_LEVEL is one of fatal, error, warn, info, debug, trace, silent');
    expect(refusal({ SQLITE_SYNCHRONOUS: 'off' })).toContain('SQLITE_SYNCHRONOUS is full or normal');
    expect(refusal({ CORS_ALLOWED_ORIGINS: 'https://a.example/path' })).toContain('CORS_ALLOWED_ORIGINS');
    expect(refusal({ PUBLIC_URL: 'ftp://x' })).toContain('PUBLIC_URL is the http:// or https:// address');
    expect(refusal({ MAX_CONNECTIONS: '0' })).toContain('MAX_CONNECTIONS is a whole number from 1');
  });

  it('names every bad variable at once', () => {
    const message = refusal({ PORT: 'x', LOG_LEVEL: 'y' });
    expect(message).toContain('PORT=');
    expect(message).toContain('LOG_LEVEL=');
  });

  it('takes the metrics and OpenTelemetry settings this build can honour, and never repeats METRICS_TOKEN', () => {
    expect(parseConfig({ OTEL_TRACES_EXPORTER: 'OTLP, console', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatchObject({
      OTEL_TRACES_EXPORTER: ['otlp', 'console'],
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toContain('grpc is not built in');
    expect(refusal({ OTEL_TRACES_EXPORTER: 'jaeger' })).toContain('OTEL_TRACES_EXPORTER is otlp, console');
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toContain('OTLP/HTTP receiver');
    expect(refusal({ METRICS: 'yes' })).toContain('METRICS is on (the default) or off');
    const message = refusal({ METRICS_TOKEN: 'short-secret' });
    expect(message).toContain('METRICS_TOKEN');
    expect(message).not.toContain('short-secret');
  });

  it('never repeats a database URL, which may hold a password', () => {
    const message = refusal({ DATABASE_URL: 'mysql://root:hunter2@db/plants' });
    expect(message).toContain('DATABASE_URL: DATABASE_URL starts with file: (SQLite) or postgresql:// (PostgreSQL)');
    expect(message).not.toContain('hunter2');
  });
});
