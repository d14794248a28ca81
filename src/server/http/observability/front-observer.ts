import type { ServerResponse } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';

import type { FrontRequest } from '@/server/http/request';

import { httpRequestDuration, httpRequests } from '@/server/observability/metrics';
import { createRouteLabeler, doorLabel, methodLabel } from './route-label';
import { inDoorSpan, inRequestSpan } from '@/server/observability/tracing';

/** What the front tells observability about each request; see front.ts for where each is called. */
export type FrontObserver = {
  /** Runs the request's handling, inside its span while tracing is on. */
  request: (request: FrontRequest, response: ServerResponse, handle: () => Promise<void>) => Promise<void>;
  /** Runs the door, inside a span of its own while tracing is on. */
  door: (request: FrontRequest, run: () => Promise<void>) => Promise<void>;
  /** Once per request, when its log line is written: the status (0: the client left) and the time. */
  answered: (request: FrontRequest, status: number, ms: number) => void;
};

/**
 * Requests counted and timed by door, route template, method and status (`metrics`: METRICS=on), and traced
 * while tracing is on. Each series' children are kept by their label values, so a request costs two map
 * lookups and two additions, not prom-client's label hashing.
 */
export function createFrontObserver(options: { router: AnyTRPCRouter; metrics: boolean }): FrontObserver {
  const routeOf = createRouteLabeler(options.router);
  const counters = new Map<string, { inc: () => void }>();
  const timers = new Map<string, { observe: (seconds: number) => void }>();

  function answered(request: FrontRequest, status: number, ms: number): void {
    const door = doorLabel(request.trace.door);
    const route = routeOf(request);
    const method = methodLabel(request.method);
    // Bounded: routes, doors and methods are fixed sets, and a status is one of Node's (100–599) or 0.
    const timerKey = `${door} ${route} ${method}`;
    const counterKey = `${timerKey} ${status}`;
    let counter = counters.get(counterKey);
    if (!counter) counters.set(counterKey, (counter = httpRequests.labels(door, route, method, String(status))));
    let timer = timers.get(timerKey);
    if (!timer) timers.set(timerKey, (timer = httpRequestDuration.labels(door, route, method)));
    counter.inc();
    timer.observe(ms / 1000);
  }

  return {
    request: (request, response, handle) => inRequestSpan(request, response, routeOf, handle),
    door: inDoorSpan,
    answered: options.metrics ? answered : () => {},
  };
}
