import 'server-only';

import { WEBHOOK_SLOW_ATTEMPT_MS } from '@/shared/limits';

import { signingSecrets } from '../secrets';
import type { BatchToSend } from './batch-in-order';
import type { TargetPolicy } from '../ssrf';

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

/**
 * Due deliveries of one endpoint as the network half sends them (batch-in-order.ts): the endpoint's secrets
 * decrypted here, each attempt signed with them at its own time. Throws when a secret cannot be read.
 */
export function batchToSend(
  endpoint: LeasedEndpoint,
  deliveries: PendingDelivery[],
  options: { key: Buffer; policy: TargetPolicy; timeoutMs: number; traced: boolean },
): BatchToSend {
  return {
    endpointId: endpoint.id,
    url: endpoint.url,
    secrets: signingSecrets(endpoint, options.key),
    deliveries: deliveries.map(({ id, eventId, payload }) => ({ id, eventId, payload })),
    traced: options.traced,
    timeoutMs: options.timeoutMs,
    slowMs: WEBHOOK_SLOW_ATTEMPT_MS,
    policy: options.policy,
  };
}
