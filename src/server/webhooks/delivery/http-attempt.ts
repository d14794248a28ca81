import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

import { DELIVERY_TIMEOUT_MS, WEBHOOK_RESPONSE_MAX_BYTES } from '@/shared/limits';

import { checkWebhookTarget, type CheckedTarget, type Lookup, type TargetPolicy, TargetRefused } from '../ssrf';

const USER_AGENT = 'PlantStore-Webhooks/1.1';

export type AttemptResult = {
  ok: boolean;
  /** The receiver's HTTP status; null when no answer came. */
  status: number | null;
  /** What went wrong, for the delivery log; null on success. Never the URL, the payload or a secret. */
  error: string | null;
  /** At most 4 KiB of the answer's body, as safe text (storedText). */
  response: string | null;
  /** True when the attempt was cut short by a shutdown: it counts as not made. */
  aborted: boolean;
};

/**
 * Text a receiver (or anything outside) wrote, as it may be stored on either engine: PostgreSQL's text
 * refuses U+0000 (`22021 invalid byte sequence`: the attempt could not be written down, and the worker sent
 * it again at once, forever), and no column should hold a lone surrogate. Both become U+FFFD, which the
 * delivery log shows as "something was here". Bytes that are not UTF-8 became U+FFFD when they were decoded.
 */
export function storedText(text: string): string {
  return text.toWellFormed().replaceAll('\0', '\uFFFD');
}

/** The kept bytes as text; a character cut in half by the 4 KiB limit is left out rather than mangled. */
function decodeKept(bytes: Buffer): string {
  return storedText(new TextDecoder('utf-8').decode(bytes, { stream: true }));
}

/** An attempt that was no delivery: no answer (`status` null), or one that was not a 2xx. */
export const attemptFailure = (error: string, status: number | null = null, response: string | null = null): AttemptResult => ({
  ok: false,
  status,
  error,
  response,
  aborted: false,
});

function describeNetworkError(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host cannot be reached';
    case 'HPE_HEADER_OVERFLOW':
      return 'the answer’s headers are too large';
    default:
      if (error.code?.startsWith('ERR_TLS') || error.code?.includes('CERT') || error.code === 'EPROTO') return `TLS failed (${error.code})`;
      return error.code?.startsWith('HPE_') ? 'the answer is not valid HTTP' : `the request failed (${error.code ?? 'network error'})`;
  }
}

/**
 * Connections kept open to receivers between attempts, one pool per URL origin and checked address (so a
 * kept socket only ever reaches an address that was checked for it), at most AGENTS_MAX pools, the least
 * recently used closed first. Under a stream of events an endpoint's attempts share one connection instead
 * of a TCP (and TLS) handshake each; a socket idle for KEPT_IDLE_MS is closed (sooner when the receiver's
 * Keep-Alive header says it closes sooner), before most servers' own idle timeouts.
 */
const agents = new Map<string, http.Agent>();
const AGENTS_MAX = 64;
const KEPT_IDLE_MS = 1_000;

function agentFor(url: URL, target: CheckedTarget): http.Agent {
  const key = `${url.protocol}//${target.host}:${url.port}@${target.address}`;
  const kept = agents.get(key);
  agents.delete(key);
  const agent = kept ?? new (url.protocol === 'https:' ? https.Agent : http.Agent)({ keepAlive: true, timeout: KEPT_IDLE_MS, scheduling: 'lifo' });
  agents.set(key, agent);
  if (agents.size > AGENTS_MAX) {
    const [oldest, pool] = agents.entries().next().value!;
    agents.delete(oldest);
    pool.destroy();
  }
  return agent;
}

/** Connects to the checked address whatever the name resolves to by now: no second resolution to rebind. */
function pinnedLookup(target: CheckedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

/**
 * One attempt: the SSRF check against what the host resolves to now, then a POST to the checked address.
 * Redirects are not followed (a 3xx is a failure). The answer's body is read up to 4 KiB; a 2xx status
 * that arrived in time counts even if its body is still trickling when the time is up.
 */
export async function sendWebhook(options: {
  url: string;
  body: string;
  headers: Record<string, string>;
  policy: TargetPolicy;
  lookup?: Lookup;
  timeoutMs?: number;
  signal?: AbortSignal;
}): Promise<AttemptResult> {
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let target: CheckedTarget;
  try {
    target = await checkWebhookTarget(options.url, options.policy, { lookup: options.lookup, timeoutMs });
  } catch (error) {
    if (error instanceof TargetRefused) return attemptFailure(`refused before sending: ${error.message}`);
    throw error;
  }
  if (options.signal?.aborted) return { ...attemptFailure('cut short by a shutdown'), aborted: true };
  const kept = await post(target, options, timeoutMs, deadline, agentFor(target.url, target));
  // A kept connection the receiver closed just as it was reused: sent again once, on a new connection.
  return kept === 'stale' ? ((await post(target, options, timeoutMs, deadline, false)) as AttemptResult) : kept;
}

function post(
  target: CheckedTarget,
  options: { body: string; headers: Record<string, string>; signal?: AbortSignal },
  timeoutMs: number,
  deadline: number,
  agent: http.Agent | false,
): Promise<AttemptResult | 'stale'> {
  const { url } = target;
  const body = Buffer.from(options.body, 'utf8');
  const client = url.protocol === 'https:' ? https : http;

  return new Promise<AttemptResult | 'stale'>((resolve) => {
    let settled = false;
    let ended = false;
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let kept = 0;
    const text = () => (status === null ? null : decodeKept(Buffer.concat(chunks)));
    const finish = (result: AttemptResult | 'stale') => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // An answer read to its end leaves its connection to the pool; anything else closes it.
      if (!ended) request.destroy();
      resolve(result);
    };
    const answered = () => {
      const ok = status !== null && status >= 200 && status < 300;
      const error = ok ? null : status !== null && status >= 300 && status < 400 ? `answered ${status}: redirects are not followed` : `answered ${status}`;
      finish({ ok, status, error, response: text(), aborted: false });
    };
    const onAbort = () => finish({ ...attemptFailure('cut short by a shutdown'), aborted: true });
    const timer = setTimeout(
      () => (status === null ? finish(attemptFailure(`no answer within ${timeoutMs / 1000} s`)) : answered()),
      Math.max(0, deadline - Date.now()),
    );

    const request = client.request(
      {
        protocol: url.protocol,
        hostname: target.host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        agent,
        lookup: pinnedLookup(target),
        headers: {
          ...options.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': USER_AGENT,
        },
      },
      (response) => {
        status = response.statusCode ?? 0;
        response.on('data', (chunk: Buffer) => {
          const room = WEBHOOK_RESPONSE_MAX_BYTES - kept;
          chunks.push(chunk.subarray(0, room));
          kept += Math.min(room, chunk.length);
          if (kept >= WEBHOOK_RESPONSE_MAX_BYTES) answered();
        });
        response.on('end', () => {
          ended = true;
          answered();
        });
        response.on('error', answered);
        response.on('close', answered);
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (status === null && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) finish('stale');
      else if (status === null) finish(attemptFailure(describeNetworkError(error)));
      else answered();
    });
    options.signal?.addEventListener('abort', onAbort, { once: true });
    request.end(body);
  });
}
