import type { AnyTRPCRouter } from '@trpc/server';
import { describe, expect, it } from 'vitest';

import type { FrontRequest } from '@/server/http/request';
import { registry } from '@/server/observability/metrics';

import { createFrontObserver } from './front-observer';

const router = {
  _def: { procedures: { list: { _def: { type: 'query', meta: { openapi: { method: 'GET', path: '/plants' } }, inputs: [] } } } },
} as unknown as AnyTRPCRouter;
const request = (method: string, door: string, pathname: string) => ({ method, trace: { door }, url: { pathname } }) as unknown as FrontRequest;

/** The request counter's lines of a scrape, as Prometheus reads them. */
const counted = async () =>
  (await registry.metrics())
    .split('\n')
    .filter((line) => line.startsWith('plantstore_http_requests_total{'))
    .join('\n');

describe('the request metrics', () => {
  it('count every answered request by door, route, method and status, each series in the order of its first request, for every reader', async () => {
    const observer = createFrontObserver({ router, metrics: true });
    const other = createFrontObserver({ router, metrics: true });
    const list = request('GET', 'rest', '/api/plants');
    observer.answered(list, 200, 1.5);
    observer.answered(request('BREW', 'front', '/'), 400, 0.1);
    observer.answered(list, 200, 2);
    observer.answered(list, 0, 9);
    expect(await counted()).toBe(
      [
        'plantstore_http_requests_total{door="rest",route="/api/plants",method="GET",status="200"} 2',
        'plantstore_http_requests_total{door="front",route="(front)",method="OTHER",status="400"} 1',
        'plantstore_http_requests_total{door="rest",route="/api/plants",method="GET",status="0"} 1',
      ].join('\n'),
    );
    // Counted once: a second read adds only what was answered since, from every front of the process.
    other.answered(list, 200, 1);
    observer.answered(request('GET', 'rest', '/api/plants/7'), 404, 0.2);
    expect(await counted()).toBe(
      [
        'plantstore_http_requests_total{door="rest",route="/api/plants",method="GET",status="200"} 3',
        'plantstore_http_requests_total{door="front",route="(front)",method="OTHER",status="400"} 1',
        'plantstore_http_requests_total{door="rest",route="/api/plants",method="GET",status="0"} 1',
        'plantstore_http_requests_total{door="rest",route="(unmatched)",method="GET",status="404"} 1',
      ].join('\n'),
    );
    expect(await registry.metrics()).toContain('plantstore_http_request_duration_seconds_count{door="rest",route="/api/plants",method="GET"} 4\n');
  });
});
