import type { ServerResponse } from 'node:http';

import type { Logger } from '@/server/log';

import type { FrontRequest } from '../request';

/**
 * One line per request, written when its answer has gone out (or the client left first): the request id,
 * method, path (never the query, which may hold what a client did not mean to log), status, time, door,
 * user id and, for tRPC, how many calls. Never a header or a body.
 */
export function logWhenAnswered(request: FrontRequest, response: ServerResponse, startedAt: number, log: Logger): void {
  response.once('close', () => {
    const entry = {
      requestId: request.id,
      method: request.method,
      path: request.url.pathname.length > 200 ? `${request.url.pathname.slice(0, 200)}…` : request.url.pathname,
      status: response.writableFinished ? response.statusCode : 0,
      ms: Math.round((performance.now() - startedAt) * 10) / 10,
      ...request.trace,
    };
    if (!response.writableFinished) log.warn({ ...entry, aborted: true }, 'request');
    else log.info(entry, 'request');
  });
}
