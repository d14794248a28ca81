'use client';

import { Plus, Webhook } from 'lucide-react';
import { useState } from 'react';
import Link from 'next/link';

import { trpc } from '@/ui/trpc';

import { queryFallback, refreshFailure } from '../QueryFallback';
import { type ColumnSpec, useColumnFit } from '../table/fit';
import { UserText } from '../UserText';
import { EndpointActions, type EndpointActionHandlers } from './EndpointActions';
import { endpointsInterval, Events, HealthCell, Queue } from './endpoint-parts';
import { webhooksHref } from './url-state';

/**
 * The URL fills; events, the queue and the state leave in that order before it shrinks. On a phone the five
 * action buttons go on two lines in a narrower column.
 */
const columnsFor = (narrow: boolean): ColumnSpec[] => [
  { id: 'url', width: 'fill', min: 10, priority: 100, always: true },
  { id: 'events', width: 9.5, priority: 1 },
  { id: 'state', width: 10, priority: 3 },
  { id: 'queue', width: 7.5, priority: 2 },
  { id: 'actions', width: narrow ? 6.5 : 10.5, priority: 100, always: true },
];
const NARROW_REM = 24;

/** Every endpoint: URL (its log a click away), events, state and what waits; each with its actions. */
export function EndpointList({ actions, onAdd }: { actions: EndpointActionHandlers; onAdd: () => void }) {
  const endpoints = trpc.webhooks.list.useQuery({}, { refetchInterval: (current) => endpointsInterval(current.state.data) });
  const [width, setWidth] = useState(0);
  const narrow = width > 0 && width / 16 < NARROW_REM;
  const COLUMNS = columnsFor(narrow);
  const [fit, frameRef] = useColumnFit(COLUMNS);
  if (fit.width !== width) setWidth(fit.width);
  const shows = (column: string) => fit.shown.has(column);
  return (
    <div className="card">
      {queryFallback(endpoints, 'webhook endpoints') ??
        (endpoints.data?.length === 0 ? (
          <div className="empty">
            <Webhook className="empty__icon" aria-hidden="true" />
            <p>No endpoints yet. Add one, and every new or deleted plant is POSTed to it, signed.</p>
            <button type="button" className="button button--primary" onClick={onAdd}>
              <Plus className="icon" aria-hidden="true" />
              Add an endpoint
            </button>
          </div>
        ) : (
          <>
            {refreshFailure(endpoints, 'list')}
            <div className="table-wrap" ref={frameRef}>
              <table className="table endpoints-table" aria-busy={endpoints.isFetching} aria-labelledby="endpoints-caption" data-fit-width={fit.width} data-columns={[...fit.shown].join(' ')}>
                <caption id="endpoints-caption" className="sr-only">
                  Webhook endpoints, oldest first
                </caption>
                <colgroup>
                  {COLUMNS.filter((column) => shows(column.id)).map((column) => (
                    <col key={column.id} className={column.id === 'actions' && narrow ? 'col-actions col-actions--narrow' : `col-${column.id}`} />
                  ))}
                </colgroup>
                <thead>
                  <tr>
                    <th scope="col">Endpoint</th>
                    {shows('events') ? <th scope="col">Events</th> : null}
                    {shows('state') ? <th scope="col">State</th> : null}
                    {shows('queue') ? <th scope="col">Deliveries</th> : null}
                    <th scope="col" className="th-actions">
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
                            <UserText className="one-line">{endpoint.url}</UserText>
                          </Link>
                          <span className="muted small one-line">
                            #{endpoint.id}
                            {endpoint.description ? (
                              <>
                                {' · '}
                                <UserText>{endpoint.description}</UserText>
                              </>
                            ) : null}
                          </span>
                          {/* What a narrow window folded away, on the cell's last line. */}
                          {!shows('state') || !shows('queue') ? (
                            <span className="folded">
                              {shows('state') ? null : <HealthCell endpoint={endpoint} />}
                              {shows('queue') ? null : <Queue endpoint={endpoint} />}
                            </span>
                          ) : null}
                        </span>
                      </td>
                      {shows('events') ? (
                        <td data-label="Events">
                          <Events endpoint={endpoint} />
                        </td>
                      ) : null}
                      {shows('state') ? (
                        <td data-label="State">
                          <HealthCell endpoint={endpoint} />
                        </td>
                      ) : null}
                      {shows('queue') ? (
                        <td data-label="Deliveries">
                          <Queue endpoint={endpoint} />
                        </td>
                      ) : null}
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
