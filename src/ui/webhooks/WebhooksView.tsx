'use client';

import { ArrowLeft, KeyRound, Pencil, Plus, ScrollText, Send, Trash2, TriangleAlert, Webhook } from 'lucide-react';
import Link from 'next/link';
import { useRouter, useSearchParams } from 'next/navigation';
import { type ReactNode, Suspense, useEffect, useMemo, useRef, useState } from 'react';

import type { WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { ConfirmDialog } from '../ConfirmDialog';
import { takeHeadingFocus } from '../focus';
import { problemOf } from '../problems';
import { queryFallback, refreshFailure } from '../QueryFallback';
import { useSession } from '../session';
import { UserText } from '../UserText';
import { When } from '../When';
import { DeliveryLog } from './DeliveryLog';
import { EndpointDialog } from './EndpointDialog';
import { SecretPanel, type ShownSecret } from './SecretPanel';
import { readWebhooksQuery, webhooksHref, type WebhooksQuery } from './url-state';

type Message = { kind: 'success' | 'info' | 'error'; text: ReactNode };
type Health = { kind: 'enabled' | 'failing' | 'disabled' | 'server-disabled'; label: string };

const count = new Intl.NumberFormat();

/** The view's word for an endpoint's state: the server disabling it after 5 days of failures is its own. */
function healthOf(endpoint: WebhookEndpoint): Health {
  if (!endpoint.enabled) return endpoint.disabledReason ? { kind: 'server-disabled', label: 'Disabled by the server' } : { kind: 'disabled', label: 'Disabled' };
  if (endpoint.failingSince) return { kind: 'failing', label: 'Failing' };
  return { kind: 'enabled', label: 'Enabled' };
}

function HealthCell({ endpoint }: { endpoint: WebhookEndpoint }) {
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

function Queue({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.pending === 0 && endpoint.failed === 0) return <span className="muted">none</span>;
  return (
    <span className="queue">
      {endpoint.pending > 0 ? <span>{count.format(endpoint.pending)} waiting</span> : null}
      {endpoint.failed > 0 ? <span className="queue__failed">{count.format(endpoint.failed)} failed</span> : null}
    </span>
  );
}

function Events({ endpoint }: { endpoint: WebhookEndpoint }) {
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

/** The webhooks view, for admins: endpoints, and one endpoint's delivery log at /webhooks?endpoint=ID. */
export function WebhooksView() {
  const { user } = useSession();
  if (user?.role !== 'admin') {
    return (
      <section aria-labelledby="webhooks-title">
        <h1 id="webhooks-title">Webhooks</h1>
        <p className="notice notice--info">Only admins manage webhooks. Ask an admin if a program of yours should hear about changes to plants.</p>
      </section>
    );
  }
  // Its address holds its state (url-state.ts); reading it needs a Suspense boundary in a static export.
  return (
    <Suspense
      fallback={
        <p className="placeholder" role="status">
          <span className="spinner" aria-hidden="true" /> Loading webhooks…
        </p>
      }
    >
      <WebhooksAdmin />
    </Suspense>
  );
}

type Dialog =
  | { kind: 'add' }
  | { kind: 'edit'; endpoint: WebhookEndpoint }
  | { kind: 'delete'; endpoint: WebhookEndpoint }
  | { kind: 'rotate'; endpoint: WebhookEndpoint }
  | null;

function WebhooksAdmin() {
  const utils = trpc.useUtils();
  const router = useRouter();
  const searchParams = useSearchParams();
  const query = useMemo(() => readWebhooksQuery(new URLSearchParams(searchParams.toString())), [searchParams]);
  const go = (next: WebhooksQuery, how: 'push' | 'replace' = 'push') => router[how](webhooksHref(next), { scroll: false });
  const headingRef = useRef<HTMLHeadingElement>(null);

  const [dialog, setDialog] = useState<Dialog>(null);
  const [secret, setSecret] = useState<ShownSecret | null>(null);
  const [message, setMessage] = useState<Message | null>(null);

  useEffect(() => takeHeadingFocus(headingRef.current), []);
  // Between the list and an endpoint's log the view changes under the cursor: it goes to the new heading.
  const shownEndpoint = useRef(query.endpoint);
  useEffect(() => {
    if (shownEndpoint.current !== query.endpoint) headingRef.current?.focus();
    shownEndpoint.current = query.endpoint;
  }, [query.endpoint]);

  const refreshEndpoints = (id?: number) =>
    Promise.all([utils.webhooks.list.invalidate(), ...(id === undefined ? [] : [utils.webhooks.get.invalidate({ id }), utils.webhooks.deliveries.invalidate({ id })])]);

  const failed = (what: string) => (error: unknown) => {
    const problem = problemOf(error);
    if (problem.status !== 401) setMessage({ kind: 'error', text: `${what}: ${problem.message}.` });
  };

  const sendTest = trpc.webhooks.sendTest.useMutation({
    onSuccess: (delivery) => {
      setMessage({
        kind: 'success',
        text: (
          <>
            A test event is on its way to endpoint {delivery.endpointId} (delivery {delivery.id}).
            {query.endpoint === delivery.endpointId ? (
              ' Its outcome appears in the log below.'
            ) : (
              <>
                {' '}
                <Link href={webhooksHref({ endpoint: delivery.endpointId })}>See it in the delivery log</Link>.
              </>
            )}
          </>
        ),
      });
    },
    onError: (error, { id }) => failed(`No test event was sent to endpoint ${id}`)(error),
    onSettled: (_, __, { id }) => refreshEndpoints(Number(id)),
  });

  const rotate = trpc.webhooks.rotateSecret.useMutation({
    onSuccess: (rotated, variables) => {
      const id = Number(variables.id);
      const endpoint = utils.webhooks.list.getData({})?.find((each) => each.id === id) ?? utils.webhooks.get.getData({ id });
      setSecret({ endpointId: id, url: endpoint?.url ?? '', secret: rotated.secret, previousValidUntil: rotated.previousValidUntil });
    },
    onError: (error, { id }) => failed(`The secret of endpoint ${id} was not rotated`)(error),
  });

  const remove = trpc.webhooks.delete.useMutation({
    onSuccess: (_, variables) => {
      const id = Number(variables.id);
      setMessage({ kind: 'info', text: `Endpoint ${id} is deleted, with its delivery log: nothing more is sent to it.` });
      // Its one-time panel must not go on offering a secret that signs nothing.
      setSecret((shown) => (shown?.endpointId === id ? null : shown));
      if (query.endpoint === id) go({}, 'replace');
    },
    onError: (error, { id }) => failed(`Endpoint ${id} was not deleted`)(error),
    onSettled: () => utils.webhooks.list.invalidate(),
  });

  const enable = trpc.webhooks.update.useMutation({
    onSuccess: (saved) => setMessage({ kind: 'success', text: `Endpoint ${saved.id} is enabled again: its waiting deliveries go out now.` }),
    onError: (error, { id }) => failed(`Endpoint ${id} was not enabled`)(error),
    onSettled: (_, __, { id }) => refreshEndpoints(Number(id)),
  });

  const actions: EndpointActionHandlers = {
    onTest: (endpoint) => {
      setMessage(null);
      sendTest.mutate({ id: endpoint.id });
    },
    onEdit: (endpoint) => {
      setMessage(null);
      setDialog({ kind: 'edit', endpoint });
    },
    onRotate: (endpoint) => {
      setMessage(null);
      setDialog({ kind: 'rotate', endpoint });
    },
    onDelete: (endpoint) => {
      setMessage(null);
      setDialog({ kind: 'delete', endpoint });
    },
    testing: sendTest.isPending && sendTest.variables ? Number(sendTest.variables.id) : undefined,
  };

  return (
    <section className="webhooks stack" aria-labelledby="webhooks-title">
      {query.endpoint === undefined ? (
        <div className="view-head">
          <div>
            <h1 id="webhooks-title" ref={headingRef} tabIndex={-1}>
              Webhooks
            </h1>
            <p>Programs hear of new and deleted plants: each event is POSTed, signed, to the endpoints that want it.</p>
          </div>
          <button
            type="button"
            className="button button--primary"
            onClick={() => {
              setMessage(null);
              setDialog({ kind: 'add' });
            }}
          >
            <Plus className="icon" aria-hidden="true" />
            Add endpoint
          </button>
        </div>
      ) : (
        <div className="view-head">
          <div>
            <Link href="/webhooks" className="back-link">
              <ArrowLeft className="icon" aria-hidden="true" />
              All endpoints
            </Link>
            <h1 id="webhooks-title" ref={headingRef} tabIndex={-1}>
              Endpoint {query.endpoint}
            </h1>
          </div>
        </div>
      )}

      {message ? (
        <div className={`notice notice--${message.kind}`} role={message.kind === 'error' ? 'alert' : 'status'}>
          <p>{message.text}</p>
        </div>
      ) : null}

      {secret ? <SecretPanel key={secret.secret} shown={secret} onDone={() => setSecret(null)} /> : null}

      {query.endpoint === undefined ? (
        <EndpointList actions={actions} onAdd={() => setDialog({ kind: 'add' })} />
      ) : (
        <EndpointDetail
          id={query.endpoint}
          query={query}
          go={go}
          actions={actions}
          onEnable={(endpoint) => {
            setMessage(null);
            enable.mutate({ id: endpoint.id, enabled: true });
          }}
        />
      )}

      {dialog?.kind === 'add' ? (
        <EndpointDialog
          mode="add"
          onCancel={() => setDialog(null)}
          onCreated={(created) => {
            setDialog(null);
            setSecret({ endpointId: created.id, url: created.url, secret: created.secret });
          }}
        />
      ) : null}
      {dialog?.kind === 'edit' ? (
        <EndpointDialog
          mode="edit"
          endpoint={dialog.endpoint}
          onCancel={() => setDialog(null)}
          onSaved={(saved) => {
            setDialog(null);
            setMessage(saved ? { kind: 'success', text: `Endpoint ${saved.id} is saved.` } : { kind: 'info', text: `Nothing was changed in endpoint ${dialog.endpoint.id}.` });
          }}
        />
      ) : null}
      {dialog?.kind === 'delete' ? (
        <ConfirmDialog
          title="Delete this endpoint?"
          confirmLabel="Delete endpoint"
          onConfirm={() => {
            const { endpoint } = dialog;
            setDialog(null);
            remove.mutate({ id: endpoint.id });
            // The row loses its buttons: the cursor goes to the view's heading, not to nowhere.
            headingRef.current?.focus();
          }}
          onCancel={() => setDialog(null)}
        >
          <p>
            Endpoint {dialog.endpoint.id} (<UserText>{dialog.endpoint.url}</UserText>) and its delivery log are deleted
            {dialog.endpoint.pending > 0 ? `; the ${count.format(dialog.endpoint.pending)} deliveries waiting for it are dropped` : ''}. Nothing more is sent to
            it. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
      {dialog?.kind === 'rotate' ? (
        <ConfirmDialog
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          onConfirm={() => {
            const { endpoint } = dialog;
            setDialog(null);
            rotate.mutate({ id: endpoint.id });
          }}
          onCancel={() => setDialog(null)}
        >
          <p>
            Endpoint {dialog.endpoint.id} (<UserText>{dialog.endpoint.url}</UserText>) gets a new signing secret, shown once. For 24 hours deliveries carry
            signatures with both the new and the current secret, so the receiver can switch over; after that only the new one signs.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

type EndpointActionHandlers = {
  onTest: (endpoint: WebhookEndpoint) => void;
  onEdit: (endpoint: WebhookEndpoint) => void;
  onRotate: (endpoint: WebhookEndpoint) => void;
  onDelete: (endpoint: WebhookEndpoint) => void;
  /** The endpoint a test event is being sent to. */
  testing: number | undefined;
};

/** An endpoint's actions: icon buttons in a list row (`compact`), labelled buttons on its own page. */
function EndpointActions({ endpoint, actions, compact }: { endpoint: WebhookEndpoint; actions: EndpointActionHandlers; compact: boolean }) {
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

/** Polls faster while something is moving: deliveries waiting, or attempts failing. */
function endpointsInterval(endpoints: WebhookEndpoint[] | undefined): number {
  return endpoints?.some((endpoint) => endpoint.pending > 0 || endpoint.failingSince) ? 2_000 : 15_000;
}

function EndpointList({ actions, onAdd }: { actions: EndpointActionHandlers; onAdd: () => void }) {
  const endpoints = trpc.webhooks.list.useQuery({}, { refetchInterval: (current) => endpointsInterval(current.state.data) });
  return (
    <div className="card">
      {queryFallback(endpoints, 'webhook endpoints') ??
        (endpoints.data?.length === 0 ? (
          <div className="empty">
            <Webhook aria-hidden="true" />
            <p>No endpoints yet. Add one, and every new or deleted plant is POSTed to it, signed.</p>
            <button type="button" className="button button--primary" onClick={onAdd}>
              <Plus className="icon" aria-hidden="true" />
              Add an endpoint
            </button>
          </div>
        ) : (
          <>
            {refreshFailure(endpoints, 'list')}
            <div className="table-wrap" role="region" aria-labelledby="endpoints-caption" tabIndex={0}>
              <table className="table endpoints-table" aria-busy={endpoints.isFetching}>
                <caption id="endpoints-caption" className="sr-only">
                  Webhook endpoints, oldest first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    <th scope="col" className="col-events">
                      Events
                    </th>
                    <th scope="col" className="col-health">
                      State
                    </th>
                    <th scope="col" className="col-queue">
                      Deliveries
                    </th>
                    <th scope="col" className="col-actions">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {(endpoints.data ?? []).map((endpoint) => (
                    <tr key={endpoint.id} data-endpoint-id={endpoint.id}>
                      <td data-label="Endpoint">
                        <span className="endpoint-cell">
                          <Link href={webhooksHref({ endpoint: endpoint.id })} className="endpoint-link" title={endpoint.url}>
                            <UserText clamp>{endpoint.url}</UserText>
                          </Link>
                          <span className="muted small">
                            #{endpoint.id}
                            {endpoint.description ? (
                              <>
                                {' · '}
                                <UserText>{endpoint.description}</UserText>
                              </>
                            ) : null}
                          </span>
                        </span>
                      </td>
                      <td data-label="Events">
                        <Events endpoint={endpoint} />
                      </td>
                      <td data-label="State">
                        <HealthCell endpoint={endpoint} />
                      </td>
                      <td data-label="Deliveries">
                        <Queue endpoint={endpoint} />
                      </td>
                      <td className="cell-actions">
                        <EndpointActions endpoint={endpoint} actions={actions} compact />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        ))}
    </div>
  );
}

type DetailProps = {
  id: number;
  query: WebhooksQuery;
  go: (next: WebhooksQuery, how?: 'push' | 'replace') => void;
  actions: EndpointActionHandlers;
  onEnable: (endpoint: WebhookEndpoint) => void;
};

/** One endpoint: what it is, how it fares, its actions, and its delivery log. */
function EndpointDetail({ id, query, go, actions, onEnable }: DetailProps) {
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
      <DeliveryLog endpoint={data} query={query} go={go} onSendTest={() => actions.onTest(data)} />
    </>
  );
}
