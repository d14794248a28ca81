import { createHash, timingSafeEqual } from 'node:crypto';

import type { FrontRequest } from '@/server/http/request';
import { type Reply, refuse } from '@/server/http/reply';

import { scrape } from '@/server/observability/metrics';

export const METRICS_PATH = '/api/metrics';

const REALM = 'Bearer realm="metrics"';
const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * `GET /api/metrics` for the one caller that holds METRICS_TOKEN (Prometheus's `authorization` setting), and
 * for nobody else: not an API token, because a scraper's credential sits in its configuration file, and an
 * admin token there could also delete every plant; not a separate bind address, because that is a second
 * listener to secure and every deployment (containers, a PaaS with one port) would have to route it. Without
 * METRICS_TOKEN (or with METRICS=off) the path does not exist (404): the figures (routes, queue sizes, memory)
 * are not public by default. The token is compared in constant time, through its digest (no length leak).
 *
 * A scrape costs one pass over the series (bounded: see route-label.ts) and at most one read of the webhook
 * queue (concurrent scrapes share it; metrics.ts).
 */
export function createMetricsRoute(token: string | undefined): ((request: FrontRequest) => Promise<Reply>) | undefined {
  if (token === undefined) return undefined;
  const holdsToken = metricsTokenCheck(token);
  return async (request) => {
    const sent = request.raw.headers.authorization;
    if (sent === undefined) throw refuse('missingToken', 'the metrics need the header "Authorization: Bearer <METRICS_TOKEN>"', { 'WWW-Authenticate': REALM });
    if (!holdsToken(request)) {
      throw refuse('invalidToken', 'this is not the metrics token (METRICS_TOKEN)', { 'WWW-Authenticate': `${REALM}, error="invalid_token"` });
    }
    const { body, contentType } = await scrape();
    return { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' }, body };
  };
}

/**
 * Whether a request carries `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time through its
 * digest. Also what shows an operator `/api/health`'s figures.
 */
export function metricsTokenCheck(token: string): (request: FrontRequest) => boolean {
  const expected = digest(`Bearer ${token}`);
  return (request) => {
    const sent = request.raw.headers.authorization;
    return sent !== undefined && timingSafeEqual(digest(sent), expected);
  };
}
