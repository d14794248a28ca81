'use client';

import { keepPreviousData } from '@tanstack/react-query';
import { ChevronFirst, ChevronLeft, ChevronRight, FileText, RefreshCw, RotateCw, ScrollText, Send } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';

import { DELIVERY_STATUSES, type WebhookEndpoint } from '@/shared/webhooks';
import { trpc } from '@/ui/trpc';

import { PagerButton } from '../PagerButton';
import { queryFallback, refreshFailure } from '../QueryFallback';
import { type ColumnSpec, useColumnFit } from '../table/fit';
import { When } from '../When';
import { DeliveryDialog, LastAttempt, NextTry, STATE_LABEL, useNow } from './delivery-parts';
import type { DeliveryState, WebhooksQuery } from './url-state';
import type { Retry } from './useRetry';

/**
 * The log's columns: the event fills (with what a narrow window folds under it); the next try, then the
 * creation time, the plant, the last status and the state leave in that order.
 */
const LOG_COLUMNS: ColumnSpec[] = [
  { id: 'event', width: 'fill', min: 9, priority: 100, always: true },
  { id: 'plant', width: 9, priority: 3 },
  { id: 'created', width: 9.5, priority: 2 },
  { id: 'state', width: 8, priority: 5 },
  { id: 'last', width: 10, priority: 4 },
  { id: 'next', width: 6.5, priority: 1 },
  { id: 'actions', width: 6, priority: 100, always: true },
];

/** Deliveries per page of the log. One more is asked for, to know whether older ones follow. */
export const LOG_PAGE_SIZE = 20;
const count = new Intl.NumberFormat();

type LogProps = {
  endpoint: WebhookEndpoint;
  query: WebhooksQuery;
  go: (next: WebhooksQuery, how?: 'push' | 'replace') => void;
  onSendTest: () => void;
  retry: Retry;
};

/**
 * One endpoint's delivery log, newest first: event, plant, attempts, the last status or error, the next
 * try, the state; a filter by state, pages by id (its address holds both), and "Retry now". Refreshed every
 * second while a delivery on the page is pending.
 */
export function DeliveryLog({ endpoint, query, go, onSendTest, retry }: LogProps) {
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
  const [fit, frameRef] = useColumnFit(LOG_COLUMNS);
  const shows = (column: string) => fit.shown.has(column);
  const backlog = trpc.webhooks.backlog.useQuery({ id: endpoint.id }).data;
  const counts = backlog?.counts;
  // The oldest waiting delivery goes first; every newer waiting one is held behind it.
  const head = backlog?.oldest[0]?.id ?? null;
  const behind = (delivery: { id: number; status: string }) => (delivery.status === 'pending' && head !== null && delivery.id > head ? head : null);
  const total = counts === undefined ? undefined : query.state ? counts[query.state] : counts.pending + counts.delivered + counts.failed;
  const hasOlder = (data?.length ?? 0) > LOG_PAGE_SIZE;
  const now = useNow(rows.some((delivery) => delivery.status === 'pending') ? 1_000 : null);
  const [viewing, setViewing] = useState<number | null>(null);
  // The page each older page was reached from, so "Newer" goes back the way it came (any Back too).
  const [cameFrom, setCameFrom] = useState<ReadonlyMap<number, number | undefined>>(new Map());

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
            <div className="table-wrap" role="region" aria-labelledby="deliveries-caption" tabIndex={0} ref={frameRef}>
              <table className="table deliveries-table" aria-busy={deliveries.isFetching} data-fit-width={fit.width} data-columns={[...fit.shown].join(' ')}>
                <caption id="deliveries-caption" className="sr-only">
                  Deliveries to endpoint {endpoint.id}, newest first{query.state ? `, ${query.state} only` : ''}
                </caption>
                <colgroup>
                  {LOG_COLUMNS.filter((column) => shows(column.id)).map((column) => (
                    <col key={column.id} className={`col-${column.id}`} />
                  ))}
                </colgroup>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    {shows('plant') ? <th scope="col">Plant</th> : null}
                    {shows('created') ? <th scope="col">Created</th> : null}
                    {shows('state') ? <th scope="col">State</th> : null}
                    {shows('last') ? <th scope="col">Last status</th> : null}
                    {shows('next') ? <th scope="col">Next try</th> : null}
                    <th scope="col" className="th-actions">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((delivery) => {
                    const state = (
                      <span className="state-cell">
                        <span className={`badge badge--${delivery.status}`}>{STATE_LABEL[delivery.status]}</span>
                        <span className="muted small" data-testid="attempts">
                          {delivery.attempts === 1 ? '1 attempt' : `${count.format(delivery.attempts)} attempts`}
                        </span>
                      </span>
                    );
                    const plant = delivery.plantId === null ? <span className="muted">—</span> : delivery.plantId.toString();
                    const next = <NextTry at={delivery.status === 'pending' ? delivery.nextAttemptAt : null} now={now} behind={behind(delivery)} />;
                    return (
                      <tr key={delivery.id} data-delivery-id={delivery.id} data-state={delivery.status}>
                        <td data-label="Event">
                          <span className="event-cell">
                            <code>{delivery.type}</code>
                            <span className="muted small">#{delivery.id}</span>
                            {/* What a narrow window folded away, under the event. */}
                            {fit.shown.size < LOG_COLUMNS.length ? (
                              <span className="folded folded--wrap">
                                {shows('state') ? null : state}
                                {shows('plant') || delivery.plantId === null ? null : <span className="folded__id">plant {plant}</span>}
                                {shows('created') ? null : <When date={new Date(delivery.createdAt)} />}
                                {shows('next') || delivery.status !== 'pending' ? null : <span>next {next}</span>}
                                {shows('last') ? null : <LastAttempt delivery={delivery} onShow={() => setViewing(delivery.id)} />}
                              </span>
                            ) : null}
                          </span>
                        </td>
                        {shows('plant') ? (
                          <td data-label="Plant" className="id">
                            {plant}
                          </td>
                        ) : null}
                        {shows('created') ? (
                          <td data-label="Created">
                            <When date={new Date(delivery.createdAt)} />
                          </td>
                        ) : null}
                        {shows('state') ? <td data-label="State">{state}</td> : null}
                        {shows('last') ? (
                          <td data-label="Last status">
                            <LastAttempt delivery={delivery} onShow={() => setViewing(delivery.id)} />
                          </td>
                        ) : null}
                        {shows('next') ? <td data-label="Next try">{next}</td> : null}
                        <td className="cell-actions">
                          <div className="row-actions">
                            {delivery.status !== 'delivered' ? (
                              <button
                                type="button"
                                className="button button--small button--quiet icon-button"
                                aria-label={`Retry delivery ${delivery.id} now`}
                                title="Retry now"
                                aria-disabled={retry.pending === delivery.id}
                                onClick={() => {
                                  if (retry.pending !== delivery.id) retry.run(delivery.id);
                                }}
                              >
                                {retry.pending === delivery.id ? <span className="spinner" aria-hidden="true" /> : <RotateCw className="icon" aria-hidden="true" />}
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
                    );
                  })}
                </tbody>
              </table>
            </div>
            <nav className="pager" aria-label="Delivery pages">
              <p className="pager__range" aria-live="polite" data-testid="deliveries-range">
                {/* The page's size is not the log's: with the totals beside it, 20 shown of 88,999 waiting says so. */}
                <strong>{count.format(rows.length)}</strong>
                {total === undefined ? '' : ` of ${count.format(total)}`} {query.state ? `${STATE_LABEL[query.state]} ` : ''}
                {total === 1 || (total === undefined && rows.length === 1) ? 'delivery' : 'deliveries'}
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

      {shown ? <DeliveryDialog delivery={shown} now={now} behind={behind(shown)} onClose={() => setViewing(null)} /> : null}
    </section>
  );
}
