import type { AnyTRPCRouter } from '@trpc/server';

import type { FrontRequest } from '@/server/http/request';
import type { ProcedureMeta } from '@/server/trpc/init';

/** What every path that no route of its door knows is counted as: one value, whatever the client sent. */
export const UNMATCHED_ROUTE = '(unmatched)';
/** A tRPC request that batches several calls (their names are counted per request, not per combination). */
export const TRPC_BATCH_ROUTE = '/api/trpc/(batch)';

/** Doors whose requests all count under one route: what follows their base path is the door's own business. */
const ONE_ROUTE_DOORS: Record<string, string> = { mcp: '/api/mcp', docs: '/api/docs', pages: '(pages)', front: '(front)' };
const SERVICE_ROUTES = new Set(['/api/health', '/api/openapi.json', '/api/metrics']);
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const TRPC_PREFIX = '/api/trpc/';
const PARAMETER = /^\{.+\}$/;

/** The request's method as a label: the methods some door answers, and `OTHER` for any other token. */
export const methodLabel = (method: string) => (KNOWN_METHODS.has(method) ? method : 'OTHER');

/**
 * A request's route as a metric label and a span's `http.route`: the REST route template (`/api/plants/{id}`)
 * from the procedures' OpenAPI metadata, the tRPC procedure (`/api/trpc/plants.list`) from the router, one
 * value per other door, and `(unmatched)` for every path none of them knows. The set of values is fixed by the
 * router: no id, path or name a client sends can make a new one (e2e/api/metrics.test.ts sends them).
 */
export function createRouteLabeler(router: AnyTRPCRouter): (request: FrontRequest) => string {
  const procedures = router._def.procedures as Record<string, { _def: { meta?: ProcedureMeta } }>;
  const templates = new Set(['/api/plants/export']);
  for (const procedure of Object.values(procedures)) {
    const openapi = procedure._def.meta?.openapi;
    if (openapi && openapi.enabled !== false) templates.add(`/api/${openapi.path.replace(/^\/|\/$/g, '')}`);
  }
  // A literal segment wins over a parameter (`/plants/export` before `/plants/{id}`), as the doors route them.
  // Each segment a literal, or (null) a parameter, worked out once rather than by a regex per request.
  const compiled = [...templates]
    .map((template) => ({ template, segments: template.split('/').map((segment) => (PARAMETER.test(segment) ? null : segment)) }))
    .sort((a, b) => b.segments.filter((segment) => segment !== null).length - a.segments.filter((segment) => segment !== null).length);
  const procedureNames = new Set(Object.keys(procedures));

  function fits(expected: (string | null)[], segments: string[]): boolean {
    if (expected.length !== segments.length) return false;
    for (let index = 0; index < segments.length; index++) {
      const literal = expected[index];
      if (literal === null ? segments[index] === '' : literal !== segments[index]) return false;
    }
    return true;
  }

  function restRoute(pathname: string): string {
    const segments = pathname.split('/');
    for (const { template, segments: expected } of compiled) if (fits(expected, segments)) return template;
    return UNMATCHED_ROUTE;
  }

  function trpcRoute(request: FrontRequest): string {
    if ((request.trace.calls ?? 1) > 1) return TRPC_BATCH_ROUTE;
    const name = request.url.pathname.slice(TRPC_PREFIX.length);
    return procedureNames.has(name) ? `${TRPC_PREFIX}${name}` : UNMATCHED_ROUTE;
  }

  return function routeOf(request: FrontRequest): string {
    const door = request.trace.door;
    if (door === undefined) return UNMATCHED_ROUTE;
    const single = ONE_ROUTE_DOORS[door];
    if (single !== undefined) return single;
    const { pathname } = request.url;
    if (door === 'rest') return restRoute(pathname);
    if (door === 'trpc') return trpcRoute(request);
    if (door === 'service' && SERVICE_ROUTES.has(pathname)) return pathname;
    return UNMATCHED_ROUTE;
  };
}

/** The door as a label: the fixed set the front and its doors name, anything else (none yet) as `front`. */
const DOORS = new Set(['rest', 'trpc', 'mcp', 'service', 'docs', 'pages', 'front']);
export const doorLabel = (door: string | undefined) => (door !== undefined && DOORS.has(door) ? door : 'front');
