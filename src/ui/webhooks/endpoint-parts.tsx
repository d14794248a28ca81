'use client';

import type { WebhookEndpoint } from '@/shared/webhooks';

import { When } from '../When';

const count = new Intl.NumberFormat();

export type Health = { kind: 'enabled' | 'failing' | 'disabled' | 'server-disabled'; label: string };

/** The view's word for an endpoint's state: the server disabling it after 5 days of failures is its own. */
export function healthOf(endpoint: WebhookEndpoint): Health {
  if (!endpoint.enabled) return endpoint.disabledReason ? { kind: 'server-disabled', label: 'Disabled by the server' } : { kind: 'disabled', label: 'Disabled' };
  if (endpoint.failingSince) return { kind: 'failing', label: 'Failing' };
  return { kind: 'enabled', label: 'Enabled' };
}

export function HealthCell({ endpoint }: { endpoint: WebhookEndpoint }) {
  const health = healthOf(endpoint);
  return (
    <span className="health">
      <span className={`badge badge--${health.kind}`}>{health.label}</span>
      {endpoint.failingSince && health.kind !== 'disabled' ? (
        <span className="muted small">
          {health.kind === 'server-disabled' ? 'after failing since ' : 'since '}
          <When date={new Date(endpoint.failingSince)} />
        </span>
      ) : null}
    </span>
  );
}

export function Queue({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.pending === 0 && endpoint.failed === 0) return <span className="muted">none</span>;
  return (
    <span className="queue">
      {endpoint.pending > 0 ? <span>{count.format(endpoint.pending)} waiting</span> : null}
      {endpoint.failed > 0 ? <span className="queue__failed">{count.format(endpoint.failed)} failed</span> : null}
    </span>
  );
}

export function Events({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <ul className="event-list" aria-label="Events">
      {endpoint.events.map((event) => (
        <li key={event}>
          <code>{event}</code>
        </li>
      ))}
    </ul>
  );
}

/** Polls faster while something is moving: deliveries waiting, or attempts failing. */
export function endpointsInterval(endpoints: WebhookEndpoint[] | undefined): number {
  return endpoints?.some((endpoint) => endpoint.pending > 0 || endpoint.failingSince) ? 2_000 : 15_000;
}
