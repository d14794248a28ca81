'use client';

import { TriangleAlert } from 'lucide-react';
import Link from 'next/link';

import type { WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { problemOf } from '../problems';
import { queryFallback } from '../QueryFallback';
import { UserText } from '../UserText';
import { When } from '../When';
import { Backlog } from './Backlog';
import { DeliveryLog } from './DeliveryLog';
import { EndpointActions, type EndpointActionHandlers } from './EndpointActions';
import { endpointsInterval, Events, HealthCell, healthOf, Queue } from './endpoint-parts';
import { useRetry } from './useRetry';
import type { WebhooksQuery } from './url-state';

type DetailProps = {
  id: number;
  query: WebhooksQuery;
  go: (next: WebhooksQuery, how?: 'push' | 'replace') => void;
  actions: EndpointActionHandlers;
  onEnable: (endpoint: WebhookEndpoint) => void;
};

/** One endpoint: what it is, how it fares, its actions, and its delivery log. */
export function EndpointDetail({ id, query, go, actions, onEnable }: DetailProps) {
  const retry = useRetry(id);
  const endpoint = trpc.webhooks.get.useQuery({ id }, { refetchInterval: (current) => endpointsInterval(current.state.data ? [current.state.data] : undefined) });
  const data = endpoint.data;
  if (!data) {
    if (endpoint.isError && problemOf(endpoint.error).status === 404) {
      return (
        <div className="notice notice--error" role="alert">
          <div className="notice__body">
            <p>There is no webhook endpoint {id}: it may have been deleted.</p>
            <div className="notice__actions">
              <Link href="/webhooks" className="button button--small">
                All endpoints
              </Link>
            </div>
          </div>
        </div>
      );
    }
    return <div className="card">{queryFallback(endpoint, 'webhook endpoint')}</div>;
  }
  const health = healthOf(data);
  return (
    <>
      <div className="card card--padded stack endpoint-summary" data-endpoint-id={data.id}>
        <div className="endpoint-summary__head">
          <p className="endpoint-url">
            <span className="sr-only">URL: </span>
            <UserText>{data.url}</UserText>
          </p>
          {data.description ? (
            <p className="muted">
              <UserText>{data.description}</UserText>
            </p>
          ) : null}
        </div>
        <dl className="details details--row">
          <div>
            <dt>Events</dt>
            <dd>
              <Events endpoint={data} />
            </dd>
          </div>
          <div>
            <dt>State</dt>
            <dd>
              <HealthCell endpoint={data} />
            </dd>
          </div>
          <div>
            <dt>Deliveries</dt>
            <dd>
              <Queue endpoint={data} />
            </dd>
          </div>
          <div>
            <dt>Added</dt>
            <dd>
              <When date={new Date(data.createdAt)} />
            </dd>
          </div>
        </dl>
        {health.kind === 'failing' ? (
          <div className="notice notice--warning" role="note">
            <TriangleAlert className="icon" aria-hidden="true" />
            <p>
              Attempts to this endpoint have failed since <When date={new Date(data.failingSince!)} />. Each delivery is retried, further apart each
              time, for 24 hours; after 5 days of failures with no success in between the server disables the endpoint.
            </p>
          </div>
        ) : null}
        {health.kind === 'server-disabled' ? (
          <div className="notice notice--error" role="note">
            <TriangleAlert className="icon" aria-hidden="true" />
            <div className="notice__body">
              <p>
                The server disabled this endpoint after 5 days of failed attempts (<UserText>{data.disabledReason!}</UserText>). No new events are queued for
                it. Once the receiver works again, enable it: its failure record is cleared and the deliveries waiting for it go out.
              </p>
              <div className="notice__actions">
                <button type="button" className="button button--small" onClick={() => onEnable(data)}>
                  Enable again
                </button>
              </div>
            </div>
          </div>
        ) : null}
        <EndpointActions endpoint={data} actions={actions} compact={false} />
      </div>
      <Backlog endpoint={data} onRetry={retry.run} retrying={retry.pending} />
      <DeliveryLog endpoint={data} query={query} go={go} onSendTest={() => actions.onTest(data)} retry={retry} />
    </>
  );
}
