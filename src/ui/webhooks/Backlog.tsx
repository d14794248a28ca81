'use client';

import { RotateCw } from 'lucide-react';

import type { WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { UserText } from '../UserText';
import { When } from '../When';

const count = new Intl.NumberFormat();

/**
 * The head of an endpoint's queue: deliveries per state, and the oldest waiting ones, which go next (an
 * endpoint gets its events in order, so the oldest holds the rest). In a backlog of thousands this is what
 * an admin needs: is it moving, and what is it stuck on.
 */
export function Backlog({ endpoint, onRetry, retrying }: { endpoint: WebhookEndpoint; onRetry: (id: number) => void; retrying: number | undefined }) {
  const backlog = trpc.webhooks.backlog.useQuery({ id: endpoint.id }, { refetchInterval: endpoint.pending > 0 ? 1_000 : 5_000 });
  const data = backlog.data;
  if (!data) return null;
  const { counts, oldest } = data;
  return (
    <section className="card card--padded backlog" aria-labelledby="backlog-title">
      <h2 id="backlog-title">Queue</h2>
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
