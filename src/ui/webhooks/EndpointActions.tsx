'use client';

import { KeyRound, Pencil, ScrollText, Send, Trash2 } from 'lucide-react';
import Link from 'next/link';

import type { WebhookEndpoint } from '@/shared/webhooks';

import { webhooksHref } from './url-state';

export type EndpointActionHandlers = {
  onTest: (endpoint: WebhookEndpoint) => void;
  onEdit: (endpoint: WebhookEndpoint) => void;
  onRotate: (endpoint: WebhookEndpoint) => void;
  onDelete: (endpoint: WebhookEndpoint) => void;
  /** The endpoint a test event is being sent to. */
  testing: number | undefined;
};

/** An endpoint's actions: icon buttons in a list row (`compact`), labelled buttons on its own page. */
export function EndpointActions({ endpoint, actions, compact }: { endpoint: WebhookEndpoint; actions: EndpointActionHandlers; compact: boolean }) {
  const what = `endpoint ${endpoint.id} (${endpoint.url})`;
  const sending = actions.testing === endpoint.id;
  const button = compact ? 'button button--small button--quiet icon-button' : 'button';
  const items: { key: string; label: string; text: string; icon: typeof Send; onClick: () => void; danger?: boolean; busy?: boolean }[] = [
    { key: 'test', label: `Send a test event to ${what}`, text: 'Send test event', icon: Send, onClick: () => actions.onTest(endpoint), busy: sending },
    { key: 'edit', label: `Edit ${what}`, text: 'Edit', icon: Pencil, onClick: () => actions.onEdit(endpoint) },
    { key: 'rotate', label: `Rotate the signing secret of ${what}`, text: 'Rotate secret', icon: KeyRound, onClick: () => actions.onRotate(endpoint) },
    { key: 'delete', label: `Delete ${what}`, text: 'Delete', icon: Trash2, onClick: () => actions.onDelete(endpoint), danger: true },
  ];
  return (
    <div className={compact ? 'row-actions' : 'endpoint-actions'}>
      {compact ? (
        <Link href={webhooksHref({ endpoint: endpoint.id })} className={button} aria-label={`Delivery log of ${what}`} title="Delivery log">
          <ScrollText className="icon" aria-hidden="true" />
        </Link>
      ) : null}
      {items.map(({ key, label, text, icon: Icon, onClick, danger, busy }) => (
        <button
          key={key}
          type="button"
          className={danger ? `${button} ${compact ? 'button--danger-quiet' : 'button--danger-quiet button--outlined'}` : button}
          aria-label={compact ? label : undefined}
          title={compact ? text : undefined}
          aria-disabled={busy || undefined}
          onClick={() => {
            if (!busy) onClick();
          }}
        >
          {busy ? <span className="spinner" aria-hidden="true" /> : <Icon className="icon" aria-hidden="true" />}
          {compact ? null : busy ? 'Sending…' : text}
        </button>
      ))}
    </div>
  );
}
