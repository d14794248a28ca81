'use client';

import { keepPreviousData } from '@tanstack/react-query';
import { ChevronFirst, ChevronLeft, ChevronRight, FileText, RefreshCw, RotateCw, ScrollText, Send } from 'lucide-react';
import { type ReactNode, useEffect, useRef, useState } from 'react';

import { DELIVERY_STATUSES, type WebhookDelivery, type WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { Modal } from '../ConfirmDialog';
import { PagerButton } from '../PagerButton';
import { problemOf } from '../problems';
import { queryFallback, refreshFailure } from '../QueryFallback';
import { UserText } from '../UserText';
import { formatFullDate, When } from '../When';
import type { DeliveryState, WebhooksQuery } from './url-state';

/** Deliveries per page of the log. One more is asked for, to know whether older ones follow. */
export const LOG_PAGE_SIZE = 20;
/** How much of a receiver's answer a table cell shows; the whole (at most 4 KiB) is in the delivery's dialog. */
const EXCERPT_LENGTH = 160;
/** Longer than this, or over several lines, an answer does not fit its cell's two lines: a link opens it whole. */
const FITS_CELL = 48;

const STATE_LABEL: Record<DeliveryState, string> = { pending: 'pending', delivered: 'delivered', failed: 'failed' };
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
const count = new Intl.NumberFormat();

/** The time, ticking every `intervalMs` while asked to (null: not ticking). */
function useNow(intervalMs: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (intervalMs === null) return;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** "in 12 sec.", "in 4 min.", or "due now" once the time has come (the delivery may wait behind older ones). */
function NextTry({ at, now }: { at: string | null; now: number }) {
  if (at === null) return <span className="muted">—</span>;
  const date = new Date(at);
  const seconds = Math.round((date.getTime() - now) / 1000);
  const text =
    seconds <= 0
      ? 'due now'
      : seconds < 90
        ? relative.format(seconds, 'second')
        : seconds < 90 * 60
          ? relative.format(Math.round(seconds / 60), 'minute')
          : seconds < 36 * 3600
            ? relative.format(Math.round(seconds / 3600), 'hour')
            : relative.format(Math.round(seconds / 86400), 'day');
  return (
    <time dateTime={at} title={formatFullDate(date)}>
      {text}
    </time>
  );
}

/** The error the server recorded, unless the HTTP status says it all ("answered 500"). */
function extraError(delivery: WebhookDelivery): string | null {
  if (!delivery.lastError) return null;
  return delivery.lastStatus !== null && delivery.lastError === `answered ${delivery.lastStatus}` ? null : delivery.lastError;
}

function excerptOf(text: string): string {
  const characters = [...text];
  return characters.length > EXCERPT_LENGTH ? `${characters.slice(0, EXCERPT_LENGTH).join('')}…` : text;
}

/** The last attempt: its HTTP status (or what went wrong), and the start of the receiver's answer. */
function LastAttempt({ delivery, onShow }: { delivery: WebhookDelivery; onShow: () => void }) {
  if (delivery.attempts === 0) return <span className="muted">not tried yet</span>;
  const error = extraError(delivery);
  const ok = delivery.lastStatus !== null && delivery.lastStatus >= 200 && delivery.lastStatus < 300;
  return (
    <div className="attempt">
      {delivery.lastStatus !== null ? <span className={`badge ${ok ? 'badge--delivered' : 'badge--failed'}`}>HTTP {delivery.lastStatus}</span> : null}
      {error ? <UserText className="attempt__error">{error}</UserText> : null}
      {delivery.lastResponse ? (
        <span className="attempt__answer">
          <UserText clamp className="response-excerpt">
            {excerptOf(delivery.lastResponse)}
          </UserText>
          {[...delivery.lastResponse].length > FITS_CELL || /[\r\n]/.test(delivery.lastResponse) ? (
            <button type="button" className="link-button" onClick={onShow} aria-label={`The whole answer to delivery ${delivery.id}`}>
              Whole answer
            </button>
          ) : null}
        </span>
      ) : null}
    </div>
  );
}

function Detail({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Everything the log keeps of one delivery, the receiver's whole answer among it, as text. */
function DeliveryDialog({ delivery, now, onClose }: { delivery: WebhookDelivery; now: number; onClose: () => void }) {
  const error = delivery.lastError;
  return (
    <Modal title={`Delivery ${delivery.id}`} onCancel={onClose} describedBy={false} className="dialog--wide">
      <dl className="details">
        <Detail term="Event">
          <code>{delivery.type}</code>
        </Detail>
        <Detail term="Event id (webhook-id)">
          <code className="break">{delivery.eventId}</code>
        </Detail>
        <Detail term="Plant">{delivery.plantId === null ? <span className="muted">—</span> : <code>{delivery.plantId.toString()}</code>}</Detail>
        <Detail term="State">
          <span className={`badge badge--${delivery.status}`}>{STATE_LABEL[delivery.status]}</span>
        </Detail>
        <Detail term="Created">{formatFullDate(new Date(delivery.createdAt))}</Detail>
        <Detail term="Attempts">{delivery.attempts}</Detail>
        <Detail term="Last attempt">{delivery.lastAttemptAt ? formatFullDate(new Date(delivery.lastAttemptAt)) : <span className="muted">none yet</span>}</Detail>
        <Detail term="Last status">{delivery.lastStatus === null ? <span className="muted">no answer</span> : `HTTP ${delivery.lastStatus}`}</Detail>
        {error ? (
          <Detail term="What went wrong">
            <UserText>{error}</UserText>
          </Detail>
        ) : null}
        {delivery.status === 'pending' ? (
          <Detail term="Next try">
            <NextTry at={delivery.nextAttemptAt} now={now} />
          </Detail>
        ) : null}
        {delivery.deliveredAt ? <Detail term="Delivered">{formatFullDate(new Date(delivery.deliveredAt))}</Detail> : null}
      </dl>
      <h3 className="details__heading">The receiver’s answer</h3>
      {delivery.lastResponse === null || delivery.lastResponse === '' ? (
        <p className="muted">{delivery.attempts === 0 ? 'Not tried yet.' : 'No body.'}</p>
      ) : (
        <>
          <p className="field__hint">As text, at most its first 4 KiB (the server reads no more).</p>
          <pre className="response-text" tabIndex={0} aria-label={`The answer to delivery ${delivery.id}`}>
            <UserText>{delivery.lastResponse}</UserText>
          </pre>
        </>
      )}
      <div className="dialog__actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
    </Modal>
  );
}

type LogProps = {
  endpoint: WebhookEndpoint;
  query: WebhooksQuery;
  go: (next: WebhooksQuery, how?: 'push' | 'replace') => void;
  onSendTest: () => void;
};

/**
 * One endpoint's delivery log, newest first: event, plant, attempts, the last status or error, the next
 * try, the state; a filter by state, pages by id (its address holds both), and "Retry now". Refreshed every
 * second while a delivery on the page is pending.
 */
export function DeliveryLog({ endpoint, query, go, onSendTest }: LogProps) {
  const utils = trpc.useUtils();
  const input = {
    id: endpoint.id,
    limit: LOG_PAGE_SIZE + 1,
    ...(query.before !== undefined ? { before: query.before } : {}),
    ...(query.state ? { status: query.state } : {}),
  };
  const deliveries = trpc.webhooks.deliveries.useQuery(input, {
    placeholderData: keepPreviousData,
    // Pending deliveries change by the second; the newest page also learns of new events.
    refetchInterval: (current) => (current.state.data?.some((delivery) => delivery.status === 'pending') ? 1_000 : query.before === undefined ? 5_000 : false),
  });
  const data = deliveries.data;
  // The endpoint's summary (its health, its counts) follows what the log learns: when a refresh brings
  // something new (React Query keeps the same object when nothing changed), the summary is asked again too.
  const seen = useRef(data);
  useEffect(() => {
    if (data === undefined || seen.current === data) return;
    const first = seen.current === undefined;
    seen.current = data;
    if (!first) void utils.webhooks.get.invalidate({ id: endpoint.id });
  }, [data, utils, endpoint.id]);
  const rows = data?.slice(0, LOG_PAGE_SIZE) ?? [];
  const hasOlder = (data?.length ?? 0) > LOG_PAGE_SIZE;
  const now = useNow(rows.some((delivery) => delivery.status === 'pending') ? 1_000 : null);
  const [viewing, setViewing] = useState<number | null>(null);
  const [message, setMessage] = useState<{ kind: 'info' | 'error'; text: string } | null>(null);
  // The page each older page was reached from, so "Newer" goes back the way it came (any Back too).
  const [cameFrom, setCameFrom] = useState<ReadonlyMap<number, number | undefined>>(new Map());

  const retry = trpc.webhooks.retry.useMutation({
    onSuccess: (delivery) => {
      setMessage({ kind: 'info', text: `Delivery ${delivery.id} is due now: it goes out after any older deliveries waiting for this endpoint.` });
    },
    onError: (error, { id }) => {
      const problem = problemOf(error);
      if (problem.status !== 401) setMessage({ kind: 'error', text: `Delivery ${id} was not retried: ${problem.message}.` });
    },
    onSettled: () => Promise.all([utils.webhooks.deliveries.invalidate({ id: endpoint.id }), utils.webhooks.get.invalidate({ id: endpoint.id }), utils.webhooks.list.invalidate()]),
  });

  const older = () => {
    const last = rows[rows.length - 1];
    if (!last || !hasOlder) return;
    setCameFrom((map) => new Map(map).set(last.id, query.before));
    go({ ...query, before: last.id });
  };
  const newer = () => go({ ...query, before: query.before === undefined ? undefined : cameFrom.get(query.before) });
  const shown = viewing === null ? undefined : rows.find((delivery) => delivery.id === viewing);

  return (
    <section className="card" aria-labelledby="log-title">
      <div className="log-head">
        <h2 id="log-title">
          <ScrollText className="icon" aria-hidden="true" /> Delivery log
        </h2>
        <div className="log-head__controls">
          <div className="field field--inline">
            <label htmlFor="delivery-state">State</label>
            <select id="delivery-state" value={query.state ?? ''} onChange={(event) => go({ endpoint: query.endpoint, state: (event.target.value || undefined) as DeliveryState | undefined })}>
              <option value="">Any state</option>
              {DELIVERY_STATUSES.map((state) => (
                <option key={state} value={state}>
                  {STATE_LABEL[state]}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="button" onClick={() => void deliveries.refetch()}>
            <RefreshCw className="icon" aria-hidden="true" />
            Refresh
          </button>
        </div>
      </div>

      {message ? (
        <p className={`notice notice--${message.kind}`} role={message.kind === 'error' ? 'alert' : 'status'}>
          {message.text}
        </p>
      ) : null}

      {queryFallback(deliveries, 'deliveries') ??
        (rows.length === 0 ? (
          <div className="empty">
            <ScrollText aria-hidden="true" />
            {query.state ? (
              <>
                <p>No {STATE_LABEL[query.state]} deliveries{query.before !== undefined ? ' on this page' : ''}.</p>
                <button type="button" className="button" onClick={() => go({ endpoint: query.endpoint })}>
                  Show every delivery
                </button>
              </>
            ) : query.before !== undefined ? (
              <>
                <p>No deliveries older than #{query.before}.</p>
                <button type="button" className="button" onClick={() => go({ endpoint: query.endpoint })}>
                  Newest deliveries
                </button>
              </>
            ) : (
              <>
                <p>No deliveries yet. Each event this endpoint receives appears here, with every attempt’s outcome.</p>
                <button type="button" className="button button--primary" onClick={onSendTest}>
                  <Send className="icon" aria-hidden="true" />
                  Send test event
                </button>
              </>
            )}
          </div>
        ) : (
          <>
            {refreshFailure(deliveries, 'log')}
            <div className="table-wrap" role="region" aria-labelledby="deliveries-caption" tabIndex={0}>
              <table className="table deliveries-table" aria-busy={deliveries.isFetching}>
                <caption id="deliveries-caption" className="sr-only">
                  Deliveries to endpoint {endpoint.id}, newest first{query.state ? `, ${query.state} only` : ''}
                </caption>
                <thead>
                  <tr>
                    <th scope="col" className="col-event">
                      Event
                    </th>
                    <th scope="col" className="col-plant">
                      Plant
                    </th>
                    <th scope="col" className="col-date">
                      Created
                    </th>
                    <th scope="col" className="col-state">
                      State
                    </th>
                    <th scope="col">Last status</th>
                    <th scope="col" className="col-next">
                      Next try
                    </th>
                    <th scope="col" className="col-actions">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((delivery) => (
                    <tr key={delivery.id} data-delivery-id={delivery.id} data-state={delivery.status}>
                      <td data-label="Event">
                        <span className="event-cell">
                          <code>{delivery.type}</code>
                          <span className="muted small">#{delivery.id}</span>
                        </span>
                      </td>
                      <td data-label="Plant" className="id">
                        {delivery.plantId === null ? <span className="muted">—</span> : delivery.plantId.toString()}
                      </td>
                      <td data-label="Created">
                        <When date={new Date(delivery.createdAt)} />
                      </td>
                      <td data-label="State">
                        <span className="state-cell">
                          <span className={`badge badge--${delivery.status}`}>{STATE_LABEL[delivery.status]}</span>
                          <span className="muted small" data-testid="attempts">
                            {delivery.attempts === 1 ? '1 attempt' : `${count.format(delivery.attempts)} attempts`}
                          </span>
                        </span>
                      </td>
                      <td data-label="Last status">
                        <LastAttempt delivery={delivery} onShow={() => setViewing(delivery.id)} />
                      </td>
                      <td data-label="Next try">
                        <NextTry at={delivery.status === 'pending' ? delivery.nextAttemptAt : null} now={now} />
                      </td>
                      <td className="cell-actions">
                        <div className="row-actions">
                          {delivery.status !== 'delivered' ? (
                            <button
                              type="button"
                              className="button button--small"
                              aria-label={`Retry delivery ${delivery.id} now`}
                              aria-disabled={retry.isPending && retry.variables?.id === delivery.id}
                              onClick={() => {
                                if (retry.isPending && retry.variables?.id === delivery.id) return;
                                setMessage(null);
                                retry.mutate({ id: delivery.id });
                              }}
                            >
                              {retry.isPending && retry.variables?.id === delivery.id ? <span className="spinner" aria-hidden="true" /> : <RotateCw className="icon" aria-hidden="true" />}
                              Retry now
                            </button>
                          ) : null}
                          <button
                            type="button"
                            className="button button--small button--quiet icon-button"
                            aria-label={`Details of delivery ${delivery.id}`}
                            title="Details"
                            onClick={() => setViewing(delivery.id)}
                          >
                            <FileText className="icon" aria-hidden="true" />
                          </button>
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav className="pager" aria-label="Delivery pages">
              <p className="pager__range" aria-live="polite" data-testid="deliveries-range">
                <strong>{count.format(rows.length)}</strong> {rows.length === 1 ? 'delivery' : 'deliveries'}
                {query.before === undefined ? ', newest first' : `, older than #${query.before}`}
                {deliveries.isPlaceholderData ? ' (loading…)' : ''}
              </p>
              <div className="pager__buttons">
                <PagerButton label="Newest deliveries" disabled={query.before === undefined} onClick={() => go({ ...query, before: undefined })} icon={ChevronFirst} />
                <PagerButton label="Newer deliveries" disabled={query.before === undefined} onClick={newer} icon={ChevronLeft} />
                <PagerButton label="Older deliveries" disabled={!hasOlder} onClick={older} icon={ChevronRight} />
              </div>
            </nav>
          </>
        ))}

      {shown ? <DeliveryDialog delivery={shown} now={now} onClose={() => setViewing(null)} /> : null}
    </section>
  );
}
