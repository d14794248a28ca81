import proxyaddr from 'proxy-addr';
import { z } from 'zod';

import { WEBHOOK_RETRY_BASE_DEFAULT_MS } from '@/shared/limits';
import { withoutTrailingSlashes } from '@/shared/text';

import { databaseEngine, DEFAULT_DATABASE_URL } from './db/database-url';

/**
 * The one description of the environment the server, the token command and the migration runner read:
 * every variable of docs/configuration.md's table, parsed once at start. A bad value stops the start
 * with a message that names the variable and says what it accepts; nothing else reads process.env.
 */

/** `BURST/PER_SECOND` (a token bucket), or `off`. */
const rateLimit = (fallback: string) =>
  z
    .string()
    .trim()
    .default(fallback)
    .transform((value, context) => {
      if (/^(off|0)$/i.test(value)) return null;
      const match = /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)$/.exec(value);
      if (match && Number(match[1]) >= 1 && Number(match[2]) > 0) return { burst: Number(match[1]), perSecond: Number(match[2]) };
      context.addIssue({ code: 'custom', message: 'is BURST/PER_SECOND with a burst of at least 1 (e.g. 600/100), or off' });
      return z.NEVER;
    });

const wholeNumber = (fallback: number, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) =>
  z
    .string()
    .trim()
    .default(String(fallback))
    .refine((value) => /^\d+$/.test(value) && Number(value) >= min && Number(value) <= max, {
      message: `is a whole number from ${min} to ${max}`,
    })
    .transform(Number);

const origin = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
    } catch {
      return false;
    }
  },
  { message: 'is a comma-separated list of origins such as https://app.example.com (scheme, host and port; no path), or *' },
);

const flag = (meaning: string) =>
  z
    .enum(['', '0', '1'], { message: `is 1 (${meaning}) or 0` })
    .default('')
    .transform((value) => value === '1');

/** 32 random bytes, as 64 hex digits or base64 (`openssl rand -base64 32`); never echoed in a message. */
const secretKey = z
  .string()
  .trim()
  .optional()
  .transform((value, context) => {
    if (value === undefined) return null;
    const bytes = /^[0-9a-f]{64}$/i.test(value) ? Buffer.from(value, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(value) ? Buffer.from(value, 'base64') : null;
    if (bytes?.length === 32) return bytes;
    context.addIssue({ code: 'custom', message: 'is 32 random bytes written as 64 hex digits or as base64 (e.g. from `openssl rand -base64 32`)' });
    return z.NEVER;
  });

/**
 * The reverse proxies whose `X-Forwarded-For` is believed: addresses, CIDR ranges (`10.0.0.0/8`) and
 * proxy-addr's names `loopback`, `linklocal`, `uniquelocal`, comma-separated. `1` (deprecated: any peer is
 * trusted as one proxy) keeps its old meaning; unset or `0`, no header is believed.
 */
const trustProxy = z
  .string()
  .trim()
  .optional()
  .transform((value, context): string[] | 'anyPeer' | null => {
    if (value === undefined || value === '0') return null;
    if (value === '1') return 'anyPeer';
    const proxies = value.split(',').map((entry) => entry.trim()).filter(Boolean);
    try {
      proxyaddr.compile(proxies);
      return proxies;
    } catch (error) {
      context.addIssue({ code: 'custom', message: `lists the proxies to trust, as addresses or CIDR ranges (e.g. 10.0.0.2,192.168.0.0/16), or loopback; ${(error as Error).message}` });
      return z.NEVER;
    }
  });

/** Variables whose value a start-up message must never repeat. */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'WEBHOOKS_SECRET_KEY', 'METRICS_TOKEN']);

/**
 * The OpenTelemetry variables that decide whether traces are on and where they go (the SDK reads the rest
 * itself: headers, timeouts, sampler, resource; see src/server/observability/tracing.ts). Only what this build
 * can do is accepted: OTLP over HTTP (protobuf or JSON) and the console; gRPC needs a native-free but large
 * client this bundle leaves out, so it is refused with the HTTP alternative instead of being ignored.
 */
/** Whether `value` is an http:// or https:// URL that also passes `more`. */
function isHttpUrl(value: string, more: (url: URL) => boolean = () => true): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && more(url);
}

const otlpProtocol = z
  .string()
  .trim()
  .optional()
  .refine((value) => value === undefined || value === 'http/protobuf' || value === 'http/json', {
    message: 'is http/protobuf (the default) or http/json; grpc is not built in: point it at the collector’s OTLP/HTTP port (4318) instead',
  });
const otlpEndpoint = z
  .string()
  .trim()
  .optional()
  .refine((value) => value === undefined || isHttpUrl(value), { message: 'is the http:// or https:// address of an OTLP/HTTP receiver, e.g. http://collector:4318' });

/** How long a streamed answer's client may take nothing before it is cut off (http/stalled-stream.ts). */
export const DEFAULT_STREAM_STALL_TIMEOUT_MS = 30_000;

const environmentSchema = z.object({
  PORT: wholeNumber(3000, { max: 65535 }),
  HOSTNAME_TO_BIND: z.string().trim().min(1).default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .trim()
    .default(DEFAULT_DATABASE_URL)
    .refine(
      (value) => {
        try {
          databaseEngine(value);
          return true;
        } catch {
          return false;
        }
      },
      // Never the value itself: it may carry a password.
      { message: 'starts with file: (SQLite) or postgresql:// (PostgreSQL)' },
    ),
  DATABASE_POOL_SIZE: wholeNumber(10, { min: 1, max: 1000 }),
  AUTH_CACHE_TTL_MS: wholeNumber(5000, { max: 3_600_000 }),
  STREAM_STALL_TIMEOUT_MS: wholeNumber(DEFAULT_STREAM_STALL_TIMEOUT_MS, { min: 1_000, max: 3_600_000 }),
  PUBLIC_URL: z
    .string()
    .trim()
    // The list's Link header starts with it; the document bounds that header's length.
    .max(2000, { message: 'is at most 2000 characters' })
    .optional()
    .refine((value) => value === undefined || isHttpUrl(value, (url) => !url.username && !url.password && !url.search && !url.hash), {
      message: 'is the http:// or https:// address people reach the service at, e.g. https://plants.example.com',
    })
    .transform((value) => (value === undefined ? undefined : withoutTrailingSlashes(value))),
  RATE_LIMIT_PER_TOKEN: rateLimit('600/100'),
  RATE_LIMIT_AUTH_FAILURES: rateLimit('60/1'),
  TRUST_PROXY: trustProxy,
  CORS_ALLOWED_ORIGINS: z
    .string()
    .trim()
    .default('')
    .transform((value) => value.split(',').map((part) => part.trim()).filter(Boolean))
    .pipe(z.array(z.union([z.literal('*'), origin])))
    .transform((origins) => (origins.length === 0 ? null : origins.includes('*') ? ('*' as const) : origins)),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    message: 'is one of fatal, error, warn, info, debug, trace, silent',
  }).default('info'),
  SQLITE_SYNCHRONOUS: z
    .string()
    .trim()
    .toLowerCase()
    .default('full')
    .pipe(z.enum(['full', 'normal'], { message: 'is full or normal' })),
  MAX_CONNECTIONS: wholeNumber(10_000, { min: 1, max: 1_000_000 }),
  SHUTDOWN_DRAIN_MS: wholeNumber(5_000, { max: 600_000 }),
  MAX_CONNECTIONS_PER_ADDRESS: wholeNumber(256, { min: 1, max: 1_000_000 }),
  WEBHOOKS_SECRET_KEY: secretKey,
  WEBHOOKS_ALLOW_HTTP: flag('webhook URLs may be http:// to a loopback address'),
  WEBHOOKS_ALLOW_PRIVATE: flag('webhook URLs may reach private, loopback and link-local addresses'),
  WEBHOOKS_RETRY_BASE_MS: wholeNumber(WEBHOOK_RETRY_BASE_DEFAULT_MS, { min: 1, max: 3_600_000 }),
  WEBHOOKS_POLL_MS: wholeNumber(5_000, { min: 10, max: 600_000 }),
  WEBHOOKS_LEASE_MS: wholeNumber(30_000, { min: 300, max: 3_600_000 }),
  WEBHOOKS_CONCURRENCY: wholeNumber(8, { min: 1, max: 256 }),
  METRICS: z.enum(['on', 'off'], { message: 'is on (the default) or off' }).default('on'),
  // A scraper's static bearer token: long enough that guessing it within the failed-authentication limit is hopeless.
  METRICS_TOKEN: z
    .string()
    .trim()
    .optional()
    .refine((value) => value === undefined || /^[\x21-\x7e]{32,512}$/.test(value), { message: 'is 32 to 512 printable characters without spaces (e.g. from `openssl rand -hex 32`)' }),
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { message: 'is true or false' }).default('false'),
  OTEL_TRACES_EXPORTER: z
    .string()
    .trim()
    .optional()
    .transform((value) => (value === undefined ? undefined : value.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean)))
    .refine((names) => names === undefined || names.every((name) => ['otlp', 'console', 'none'].includes(name)), {
      message: 'is otlp, console, both (otlp,console) or none',
    }),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpEndpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_SERVICE_NAME: z.string().trim().max(200).default('plant-store'),
});

export type Config = z.output<typeof environmentSchema>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Empty values count as unset, as a shell's `VAR= npm start` means. */
function present(environment: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
}

export function parseConfig(environment: Record<string, string | undefined>): Config {
  const result = environmentSchema.safeParse(present(environment));
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0]);
    const shown = SECRET_VARIABLES.has(name) ? '' : `="${String(environment[name]).slice(0, 100)}"`;
    return `  ${name}${shown}: ${name} ${issue.message}`;
  });
  throw new ConfigError(`the environment is not valid:\n${lines.join('\n')}`);
}

let loaded: Config | undefined;

/**
 * The configuration of this process, read from the environment on first use. Entry points call it before
 * anything else, so a bad value stops them with its message before any module relies on it.
 */
export function config(): Config {
  loaded ??= parseConfig(process.env);
  return loaded;
}
