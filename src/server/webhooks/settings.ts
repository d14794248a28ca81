import 'server-only';

import { AppError } from '@/shared/errors';

import { checkWebhookTarget, type Lookup, type TargetPolicy, TargetRefused } from './ssrf';

/**
 * What the entry point hands down at start for the endpoints' rows: the key their signing secrets are
 * encrypted with, and the target policy their URLs are checked against (the worker gets the same two).
 */
export type WebhookSettings = { key: Buffer | null; policy: TargetPolicy };

// Until the entry point configures it: no key (webhooks off) and the strictest policy.
let settings: WebhookSettings = { key: null, policy: { allowHttp: false, allowPrivate: false } };

/** Called once at start by the entry point, from WEBHOOKS_SECRET_KEY, WEBHOOKS_ALLOW_HTTP and WEBHOOKS_ALLOW_PRIVATE. */
export function configureWebhookService(handedDown: WebhookSettings): void {
  settings = handedDown;
}

/** The key signing secrets are encrypted with; without one, webhooks are off and saying so is the answer. */
export function secretKey(): Buffer {
  const { key } = settings;
  if (!key) {
    throw new AppError('webhooksNotConfigured', 'webhooks are off on this server: set WEBHOOKS_SECRET_KEY (32 random bytes, e.g. `openssl rand -base64 32`) and restart it');
  }
  return key;
}

/** The URL as the WHATWG parser writes it, once it passed the SSRF guard against what it resolves to now. */
export async function checkedUrl(url: string, lookup?: Lookup): Promise<string> {
  try {
    return (await checkWebhookTarget(url, settings.policy, { lookup })).url.href;
  } catch (error) {
    if (error instanceof TargetRefused) throw new AppError('webhookUrlNotAllowed', error.message, 'url');
    throw error;
  }
}
