import type { ServerResponse } from 'node:http';

import type { Logger } from '@/server/log';

import type { FrontRequest } from '../request';

/**
 * One line per request, written when its answer has gone out (or the client left first): the request id,
 * method, path (never the query, which may hold what a client did not mean to log), status, time, door,
 * user id, for tRPC how many calls, and with tracing on the trace id. Never a header or a body.
 * `answered` sees the same figures (the request metrics: http/observability/front-observer.ts).
 */
export function logWhenAnswered(
  request: FrontRequest,
  response: ServerResponse,
  startedAt: number,
  log: Logger,
  answered?: (request: FrontRequest, status: number, ms: number) => void,
): void {
  response.once('close', () => {
    const ms = performance.now() - startedAt;
    const status = response.writableFinished ? response.statusCode : 0;
    answered?.(request, status, ms);
    const entry = {
      requestId: request.id,
      method: request.method,
      path: request.url.pathname.length > 200 ? `${request.url.pathname.slice(0, 200)}…` : request.url.pathname,
      status,
      ms: Math.round(ms * 10) / 10,
      ...request.trace,
    };
    if (!response.writableFinished) log.warn({ ...entry, aborted: true }, 'request');
    else log.info(entry, 'request');
  });
}
