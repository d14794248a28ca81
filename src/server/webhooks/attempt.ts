import 'server-only';

import { inDeliverySpan } from '@/server/observability/tracing';

import { signingSecrets } from './secrets';
import { type AttemptResult, sendWebhook } from './send';
import { webhookHeaders } from './signing';
import type { Lookup, TargetPolicy } from './ssrf';

/** An endpoint as its sender reads it each batch: where to send, whether it may, and how to sign. */
export type LeasedEndpoint = {
  id: number;
  url: string;
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretUntilMs: bigint | null;
  failingSinceMs: bigint | null;
  leaseOwner: string | null;
};

/** A delivery waiting to be sent, as its sender reads it. */
export type PendingDelivery = { id: number; eventId: string; type: string; payload: string; attempts: number; createdAtMs: bigint; nextAttemptAtMs: bigint };

export type AttemptOptions = { key: Buffer; policy: TargetPolicy; lookup?: Lookup; timeoutMs: number; signal: AbortSignal };

/** One attempt of one delivery: signed with the endpoint's secrets now, sent through the SSRF guard. */
export async function attemptDelivery(endpoint: LeasedEndpoint, delivery: PendingDelivery, options: AttemptOptions): Promise<AttemptResult> {
  let secrets: string[];
  try {
    secrets = signingSecrets(endpoint, options.key);
  } catch (error) {
    return { ok: false, status: null, error: (error as Error).message, response: null, aborted: false };
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const attempt = { endpointId: endpoint.id, deliveryId: delivery.id, eventId: delivery.eventId, eventType: delivery.type, attempt: delivery.attempts + 1, url: endpoint.url };
  // With tracing on, the attempt is a span and the receiver gets its `traceparent` (observability/tracing.ts).
  return inDeliverySpan(attempt, (traceHeaders) =>
    sendWebhook({
      url: endpoint.url,
      body: delivery.payload,
      headers: { ...webhookHeaders(secrets, delivery.eventId, timestamp, delivery.payload), ...traceHeaders },
      policy: options.policy,
      lookup: options.lookup,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    }),
  );
}
