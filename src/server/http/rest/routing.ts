import type { AnyTRPCRouter } from '@trpc/server';

import type { z } from 'zod';

import type { Actor } from '@/server/auth/permissions';
import type { DeclaredProcedure } from '@/server/problems';
import type { ProcedureRef } from '@/server/trpc/call';
import type { ProcedureMeta } from '@/server/trpc/init';

import { noSuchPath } from '../reply';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RestRoute = {
  /** The procedure the route calls. */
  procedure: ProcedureRef;
  /** Whether the procedure takes an input (one without is called with none). */
  takesInput: boolean;
  method: HttpMethod;
  /** As written in the procedure's meta, e.g. `/plants/{id}`. */
  template: string;
  pathParameters: string[];
  /** Whether the route needs a bearer token (trpc-to-openapi's `protect`, on unless turned off). */
  protect: boolean;
  /** The input's fields that are not path parameters: the query a GET or DELETE takes. */
  queryParameters: string[];
  /**
   * Whether a POST, PUT or PATCH declares a request body: its input has fields beyond the path's, as
   * trpc-to-openapi decides when it writes `requestBody` into the document.
   */
  takesBody: boolean;
  /** The request headers the operation declares (`requestHeaders` in its meta), in lower case. */
  requestHeaders: string[];
  /**
   * For an operation that takes its body as `text/csv` (`contentTypes` in its meta): the one input field that is
   * not in the path, which gets the body's text.
   */
  textBody?: string;
  /** The media type of the file the procedure's result is (`file` in its meta): streamed as it is made. */
  file?: string;
  /** The procedure's `conditional` meta: the caller's version of what its answer shows (see conditional.ts). */
  conditional?: (actor: Actor) => string | (() => Promise<string>);
};

export type RouteMatch =
  | { kind: 'found'; route: RestRoute; pathValues: Record<string, string> }
  | { kind: 'wrongMethod'; allowed: string };

/** A template's segments, each a literal to equal or (`parameter`) a path value's name, worked out once. */
type CompiledPath = { segments: { literal: string; parameter: string | undefined }[]; routes: Map<string, RestRoute> };

const PARAMETER = /^\{(.+)\}$/;

/**
 * Orders two templates of the same length (others never match the same path): at the first segment where one
 * has a literal and the other a parameter, the literal first.
 */
function specificity(a: CompiledPath, b: CompiledPath): number {
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  for (let index = 0; index < a.segments.length; index++) {
    const literalA = a.segments[index]!.parameter === undefined;
    const literalB = b.segments[index]!.parameter === undefined;
    if (literalA !== literalB) return literalA ? -1 : 1;
  }
  return 0;
}

/** `GET` implies `HEAD`; every known path answers `OPTIONS`. */
function allowHeader(routes: Map<string, RestRoute>): string {
  const methods = [...routes.keys()];
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}

/**
 * Percent-decodes each segment; a segment that is not valid percent-encoding matches no route. A segment
 * without `%` is its own decoding, so only the others go through `decodeURIComponent`.
 */
function decodeSegments(path: string): string[] | undefined {
  const segments = path.split('/');
  segments.shift();
  if (!path.includes('%')) return segments;
  try {
    for (let index = 0; index < segments.length; index++) if (segments[index]!.includes('%')) segments[index] = decodeURIComponent(segments[index]!);
    return segments;
  } catch {
    return undefined;
  }
}

/** One REST operation: the route the chain serves, the procedure's OpenAPI meta it was read from, and the procedure. */
export type RestOperation = { route: RestRoute; openapi: NonNullable<ProcedureMeta['openapi']>; procedure: DeclaredProcedure };

type ProcedureDef = { type: ProcedureRef['type']; meta?: ProcedureMeta; inputs: (z.ZodType & { shape?: object })[] };

/** The REST operations of a router, read from the same procedure meta that trpc-to-openapi documents. */
export function restOperations(router: AnyTRPCRouter): RestOperation[] {
  const operations: RestOperation[] = [];
  for (const [path, procedure] of Object.entries(router._def.procedures as Record<string, { _def: ProcedureDef }>)) {
    const openapi = procedure._def.meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const template = `/${openapi.path.replace(/^\/|\/$/g, '')}`;
    const pathParameters = template.split('/').flatMap((segment) => PARAMETER.exec(segment)?.[1] ?? []);
    const inputFields = procedure._def.inputs.flatMap((input) => Object.keys(input.shape ?? {}));
    const queryParameters = inputFields.filter((field) => !pathParameters.includes(field));
    const takesText = openapi.contentTypes?.includes('text/csv') ?? false;
    if (takesText && queryParameters.length !== 1) throw new Error(`procedure ${path}: a text/csv body goes to one input field besides the path's, and it has ${queryParameters.length}`);
    const route: RestRoute = {
      procedure: { path, type: procedure._def.type },
      takesInput: procedure._def.inputs.length > 0,
      method: openapi.method,
      template,
      pathParameters,
      protect: openapi.protect ?? true,
      queryParameters,
      takesBody: ['POST', 'PUT', 'PATCH'].includes(openapi.method) && queryParameters.length > 0,
      requestHeaders: Object.keys(openapi.requestHeaders?.shape ?? {}).map((name) => name.toLowerCase()),
      ...(takesText && { textBody: queryParameters[0] }),
      ...(procedure._def.meta?.conditional && { conditional: procedure._def.meta.conditional }),
      ...(procedure._def.meta?.file && { file: procedure._def.meta.file }),
    };
    operations.push({ route, openapi, procedure: procedure._def });
  }
  return operations;
}

/**
 * The REST method table: which procedure a request calls, or why none (an unknown path is a 404, a known
 * path with the wrong method a 405 with `Allow`), and which values came from the path. Tables are Maps: a
 * path segment such as `constructor` or `__proto__` is data, never a property lookup.
 */
export function buildRouteTable(router: AnyTRPCRouter, basePath: string) {
  const byTemplate = new Map<string, CompiledPath>();
  for (const { route } of restOperations(router)) {
    const compiled = byTemplate.get(route.template) ?? {
      segments: route.template
        .split('/')
        .slice(1)
        .map((literal) => ({ literal, parameter: PARAMETER.exec(literal)?.[1] })),
      routes: new Map(),
    };
    compiled.routes.set(route.method, route);
    byTemplate.set(route.template, compiled);
  }
  // A literal segment before a parameter in the same place (`/plants/imports` before `/plants/{id}`), so a path
  // is served by its most specific template whichever was declared first.
  const paths = [...byTemplate.values()].sort((a, b) => specificity(a, b));
  const basePrefix = `${basePath}/`;

  /** Whether `segments` fit the template: each literal equal, each parameter a value (an empty segment, `/plants/`, is none). */
  function fits(path: CompiledPath, segments: string[]): boolean {
    if (path.segments.length !== segments.length) return false;
    for (let index = 0; index < segments.length; index++) {
      const { literal, parameter } = path.segments[index]!;
      if (parameter === undefined ? literal !== segments[index] : segments[index] === '') return false;
    }
    return true;
  }

  /** Throws a 404 refusal for a path no route has; `HEAD` is matched as `GET`. */
  return function match(method: string, pathname: string): RouteMatch {
    const segments = pathname.startsWith(basePrefix) ? decodeSegments(pathname.slice(basePath.length)) : undefined;
    for (const path of segments ? paths : []) {
      if (!fits(path, segments!)) continue;
      const pathValues: Record<string, string> = {};
      for (let index = 0; index < segments!.length; index++) {
        const { parameter } = path.segments[index]!;
        if (parameter !== undefined) pathValues[parameter] = segments![index]!;
      }
      const route = path.routes.get(method === 'HEAD' ? 'GET' : method);
      return route ? { kind: 'found', route, pathValues } : { kind: 'wrongMethod', allowed: allowHeader(path.routes) };
    }
    throw noSuchPath(pathname);
  };
}
