import type { AnyTRPCRouter } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RestRoute = {
  method: HttpMethod;
  /** As written in the procedure's meta, e.g. `/plants/{id}`. */
  template: string;
  pathParameters: string[];
  /** Whether the route needs a bearer token (trpc-to-openapi's `protect`, on unless turned off). */
  protect: boolean;
  /** The input's fields that are not path parameters: the query a GET or DELETE takes. */
  queryParameters: string[];
};

export type RouteMatch =
  | { kind: 'found'; route: RestRoute; pathValues: Record<string, string> }
  | { kind: 'wrongMethod'; allowed: HttpMethod[] }
  | { kind: 'noSuchPath' };

type CompiledPath = { template: string; segments: string[]; routes: RestRoute[] };

/**
 * The REST method table, read from the same procedure meta that trpc-to-openapi serves. The edge needs it
 * before the library runs: to tell an unknown path (404) from a known path with the wrong method (405 with
 * `Allow`), which the library answers alike with 404, and to know which values came from the path.
 */
export function buildRouteTable(router: AnyTRPCRouter) {
  const byTemplate = new Map<string, CompiledPath>();
  for (const procedure of Object.values(router._def.procedures as Record<string, { _def: { meta?: OpenApiMeta; inputs: { shape?: object }[] } }>)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const template = `/${openapi.path.replace(/^\/|\/$/g, '')}`;
    const segments = template.split('/').slice(1);
    const pathParameters = segments.flatMap((segment) => /^\{(.+)\}$/.exec(segment)?.[1] ?? []);
    const inputFields = procedure._def.inputs.flatMap((input) => Object.keys(input.shape ?? {}));
    const route: RestRoute = {
      method: openapi.method,
      template,
      pathParameters,
      protect: openapi.protect ?? true,
      queryParameters: inputFields.filter((field) => !pathParameters.includes(field)),
    };
    const compiled = byTemplate.get(template) ?? { template, segments, routes: [] };
    compiled.routes.push(route);
    byTemplate.set(template, compiled);
  }
  const paths = [...byTemplate.values()];

  /** `segments` are the request path's segments below the base URL, already percent-decoded. */
  return function match(method: string, segments: string[]): RouteMatch {
    for (const path of paths) {
      if (path.segments.length !== segments.length) continue;
      const pathValues: Record<string, string> = {};
      const fits = path.segments.every((expected, index) => {
        const parameter = /^\{(.+)\}$/.exec(expected)?.[1];
        if (parameter) pathValues[parameter] = segments[index]!;
        return parameter !== undefined || expected === segments[index];
      });
      if (!fits) continue;
      const route = path.routes.find((candidate) => candidate.method === method);
      return route ? { kind: 'found', route, pathValues } : { kind: 'wrongMethod', allowed: path.routes.map((r) => r.method) };
    }
    return { kind: 'noSuchPath' };
  };
}
