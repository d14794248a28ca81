import { createHmac } from 'node:crypto';

import { secretKeyBytes } from './secrets';

/**
 * Standard Webhooks (standardwebhooks.com) signing: HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`
 * with the secret's bytes, sent as `webhook-signature: v1,<base64>`. Several secrets (the current one and,
 * for a day after a rotation, the previous one) give several signatures separated by spaces; a receiver
 * accepts the message when any one of them verifies.
 */
export function signatureOf(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', secretKeyBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt; `timestamp` is the attempt's time in Unix seconds. */
export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signatureOf(secret, id, timestamp, body)).join(' '),
  };
}
