import type { ServerResponse } from 'node:http';

import type { AnyTRPCRouter } from '@trpc/server';

import type { FrontRequest } from '@/server/http/request';

import { httpRequestDuration, type RequestCount, requestCount } from '@/server/observability/metrics';
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

/** The series one door, route and method is counted and timed in: the timer, and a count per status. */
type RequestSeries = { timer: { observe: (seconds: number) => void }; counts: Map<number, RequestCount> };

/**
 * Requests counted and timed by door, route template, method and status (`metrics`: METRICS=on), and traced
 * while tracing is on. Each series is kept by its label values in nested Maps (door, route, method, status:
 * all from fixed sets, the route and door names made once), so a request costs four lookups by values whose
 * hashes are already known, one addition, and the histogram's `observe`; no key string is built per request.
 */
export function createFrontObserver(options: { router: AnyTRPCRouter; metrics: boolean }): FrontObserver {
  const routeOf = createRouteLabeler(options.router);
  const seriesByDoor = new Map<string, Map<string, Map<string, RequestSeries>>>();

  function seriesOf(door: string, route: string, method: string): RequestSeries {
    let byRoute = seriesByDoor.get(door);
    if (!byRoute) seriesByDoor.set(door, (byRoute = new Map()));
    let byMethod = byRoute.get(route);
    if (!byMethod) byRoute.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) byMethod.set(method, (series = { timer: httpRequestDuration.labels(door, route, method), counts: new Map() }));
    return series;
  }

  function answered(request: FrontRequest, status: number, ms: number): void {
    const door = doorLabel(request.trace.door);
    const route = routeOf(request);
    const method = methodLabel(request.method);
    // Bounded: routes, doors and methods are fixed sets, and a status is one of Node's (100–599) or 0.
    const series = seriesOf(door, route, method);
    let count = series.counts.get(status);
    if (!count) series.counts.set(status, (count = requestCount(door, route, method, status)));
    count.pending++;
    series.timer.observe(ms / 1000);
  }

  return {
    request: (request, response, handle) => inRequestSpan(request, response, routeOf, handle),
    door: inDoorSpan,
    answered: options.metrics ? answered : () => {},
  };
}
