/** What the webhook suites share: the environment that turns webhooks on for loopback receivers. */
import { randomBytes } from 'node:crypto';

import type { ApiClient } from './http-client';

/** The METRICS_TOKEN of webhookEnv's servers: its holder reads the webhook queue's figures on `/api/health`. */
export const OPERATOR_TOKEN = randomBytes(32).toString('hex');

/**
 * A server whose webhooks may go to receivers on loopback (the tests' own), with a short retry schedule, and
 * whose queue figures OPERATOR_TOKEN reads.
 */
export function webhookEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    METRICS_TOKEN: OPERATOR_TOKEN,
    WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOKS_ALLOW_HTTP: '1',
    WEBHOOKS_ALLOW_PRIVATE: '1',
    WEBHOOKS_RETRY_BASE_MS: '100',
    WEBHOOKS_POLL_MS: '250',
    WEBHOOKS_LEASE_MS: '1500',
    RATE_LIMIT_PER_TOKEN: 'off',
    ...extra,
  };
}

/** Registers an endpoint through REST; resolves to its id and secret. */
export async function registerEndpoint(admin: ApiClient, url: string, events = ['plant.created', 'plant.deleted']): Promise<{ id: number; secret: string }> {
  const response = await admin.post('/api/webhooks/endpoints', JSON.stringify({ url, events }));
  if (response.status !== 200) throw new Error(`registering ${url} answered ${response.status}: ${response.text}`);
  return { id: Number(response.json.id), secret: response.json.secret as string };
}

/** The plant id in a webhook body, exact. */
export const plantIdOf = (body: string): string => /"data":\{"id":(-?\d+)/.exec(body)?.[1] ?? '';

export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} was not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
