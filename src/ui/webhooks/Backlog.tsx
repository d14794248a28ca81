'use client';

import { Ban, RotateCw } from 'lucide-react';
import { useLayoutEffect, useRef, useState } from 'react';

import { DISCARDED_ERROR, type WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { ConfirmDialog } from '../ConfirmDialog';
import { UserText } from '../UserText';
import { When } from '../When';
import { type QueueAction, useQueueBatch } from './useQueueBatch';

const count = new Intl.NumberFormat();

/**
 * The head of an endpoint's queue: deliveries per state, and the oldest waiting ones, which go next (an
 * endpoint gets its events in order, so the oldest holds the rest). In a backlog of thousands this is what
 * an admin needs: is it moving, and what is it stuck on; and, for the whole queue at once, Retry all (the
 * waiting ones due now, or the given-up ones waiting again) and Discard (the waiting ones given up).
 */
export function Backlog({ endpoint, onRetry, retrying }: { endpoint: WebhookEndpoint; onRetry: (id: number) => void; retrying: number | undefined }) {
  const backlog = trpc.webhooks.backlog.useQuery({ id: endpoint.id }, { refetchInterval: endpoint.pending > 0 ? 1_000 : 5_000 });
  const queue = useQueueBatch(endpoint.id);
  const [discarding, setDiscarding] = useState(false);
  // An action's button goes once its queue is empty: the cursor then goes to the heading, not to <body>.
  const heading = useRef<HTMLHeadingElement>(null);
  const focused = useRef<Element | null>(null);
  useLayoutEffect(() => {
    if (focused.current && !focused.current.isConnected && (!document.activeElement || document.activeElement === document.body)) heading.current?.focus();
    if (focused.current && !focused.current.isConnected) focused.current = null;
  });
  const data = backlog.data;
  if (!data) return null;
  const { counts, oldest } = data;
  const action = (kind: QueueAction, label: string, Icon: typeof RotateCw, className = 'button button--small') => (
    <button type="button" className={className} aria-disabled={queue.running !== null || undefined} onClick={() => (queue.running === null ? (kind === 'discard' ? setDiscarding(true) : void queue.run(kind)) : undefined)}>
      {queue.running === kind ? <span className="spinner" aria-hidden="true" /> : <Icon className="icon" aria-hidden="true" />}
      {label}
    </button>
  );
  return (
    <section className="card card--padded backlog" aria-labelledby="backlog-title">
      <h2 id="backlog-title" ref={heading} tabIndex={-1}>
        Queue
      </h2>
      <dl className="counts" data-testid="delivery-counts">
        <div>
          <dt>Waiting</dt>
          <dd>{count.format(counts.pending)}</dd>
        </div>
        <div>
          <dt>Delivered</dt>
          <dd>{count.format(counts.delivered)}</dd>
        </div>
        <div>
          <dt>Failed</dt>
          <dd className={counts.failed > 0 ? 'queue__failed' : undefined}>{count.format(counts.failed)}</dd>
        </div>
      </dl>
      {counts.pending > 0 || counts.failed > 0 ? (
        <div
          className="backlog__actions"
          onFocus={(event) => {
            focused.current = event.target;
          }}
          onBlur={(event) => {
            if (event.relatedTarget) focused.current = null;
          }}
        >
          {counts.pending > 0 ? action('retryWaiting', `Retry all ${count.format(counts.pending)} waiting now`, RotateCw) : null}
          {counts.failed > 0 ? action('retryFailed', `Retry all ${count.format(counts.failed)} failed`, RotateCw) : null}
          {counts.pending > 0 ? action('discard', `Discard ${count.format(counts.pending)} waiting`, Ban, 'button button--small button--danger-quiet button--outlined') : null}
        </div>
      ) : null}
      {discarding ? (
        <ConfirmDialog
          title={`Discard ${count.format(counts.pending)} waiting ${counts.pending === 1 ? 'delivery' : 'deliveries'}?`}
          confirmLabel="Discard"
          onConfirm={() => {
            setDiscarding(false);
            void queue.run('discard');
          }}
          onCancel={() => setDiscarding(false)}
        >
          <p>
            They are not sent: each is marked failed (“{DISCARDED_ERROR}”) and stays in the log for 7 days, where it can be retried. A delivery being sent at this
            moment may still arrive.
          </p>
        </ConfirmDialog>
      ) : null}
      {oldest.length > 0 ? (
        <>
          <h3 className="details__heading">Next to go, oldest first</h3>
          <ol className="backlog__list" data-testid="oldest-pending">
            {oldest.map((delivery, index) => (
              <li key={delivery.id} data-delivery-id={delivery.id}>
                <span className="backlog__what">
                  <strong>#{delivery.id}</strong> <code>{delivery.type}</code> · created <When date={new Date(delivery.createdAt)} /> ·{' '}
                  {delivery.attempts === 1 ? '1 attempt' : `${count.format(delivery.attempts)} attempts`}
                  {delivery.lastError ? (
                    <>
                      {' '}
                      · <UserText className="one-line">{delivery.lastError}</UserText>
                    </>
                  ) : null}
                  {index === 0 && counts.pending > 1 ? <span className="muted"> — holds the {count.format(counts.pending - 1)} after it</span> : null}
                </span>
                <button
                  type="button"
                  className="button button--small"
                  aria-label={`Retry delivery ${delivery.id} now`}
                  aria-disabled={retrying === delivery.id || undefined}
                  onClick={() => retrying !== delivery.id && onRetry(delivery.id)}
                >
                  {retrying === delivery.id ? <span className="spinner" aria-hidden="true" /> : <RotateCw className="icon" aria-hidden="true" />}
                  Retry now
                </button>
              </li>
            ))}
          </ol>
        </>
      ) : (
        <p className="muted">Nothing is waiting: every event has been delivered or given up.</p>
      )}
    </section>
  );
}
