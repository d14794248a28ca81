import type { AnyTRPCRouter } from '@trpc/server';
import { describe, expect, it } from 'vitest';

import { Refusal } from '../reply';

import { buildRouteTable } from './routing';

/** A router as the table reads it: procedures with their OpenAPI meta and input shapes. */
function routerOf(operations: [method: string, path: string][]): AnyTRPCRouter {
  const procedures = Object.fromEntries(
    operations.map(([method, path], index) => [`p${index}`, { _def: { type: method === 'GET' ? 'query' : 'mutation', meta: { openapi: { method, path } }, inputs: [{ shape: { id: 1, limit: 1 } }] } }]),
  );
  return { _def: { procedures } } as unknown as AnyTRPCRouter;
}

const match = buildRouteTable(
  routerOf([
    ['GET', '/plants'],
    ['POST', '/plants'],
    ['PATCH', '/plants/{id}'],
    ['GET', '/plants/imports'],
    ['GET', '/webhooks/endpoints/{id}/deliveries'],
    ['POST', '/webhooks/deliveries/{id}/retry'],
  ]),
  '/api',
);
const found = (method: string, path: string) => {
  const result = match(method, path);
  return result.kind === 'found' ? { template: result.route.template, method: result.route.method, pathValues: result.pathValues } : result;
};
const refusedAs = (method: string, path: string) => {
  try {
    match(method, path);
  } catch (error) {
    return error instanceof Refusal ? error.problem.kind : error;
  }
  return 'answered';
};

describe('the REST route table', () => {
  it('matches literal segments exactly and takes parameters from the path, percent-decoded', () => {
    expect(found('GET', '/api/plants')).toEqual({ template: '/plants', method: 'GET', pathValues: {} });
    expect(found('HEAD', '/api/plants')).toEqual({ template: '/plants', method: 'GET', pathValues: {} });
    expect(found('PATCH', '/api/plants/4611686018427387904')).toEqual({ template: '/plants/{id}', method: 'PATCH', pathValues: { id: '4611686018427387904' } });
    expect(found('PATCH', '/api/plants/%31%32')).toEqual({ template: '/plants/{id}', method: 'PATCH', pathValues: { id: '12' } });
    expect(found('GET', '/api/plant%73')).toEqual({ template: '/plants', method: 'GET', pathValues: {} });
    expect(found('GET', '/api/webhooks/endpoints/7/deliveries')).toEqual({ template: '/webhooks/endpoints/{id}/deliveries', method: 'GET', pathValues: { id: '7' } });
    expect(found('POST', '/api/webhooks/deliveries/a%2Fb/retry')).toEqual({ template: '/webhooks/deliveries/{id}/retry', method: 'POST', pathValues: { id: 'a/b' } });
  });

  it('serves a path by its most specific template, whichever was declared first', () => {
    expect(found('GET', '/api/plants/imports')).toEqual({ template: '/plants/imports', method: 'GET', pathValues: {} });
    expect(match('PATCH', '/api/plants/imports')).toEqual({ kind: 'wrongMethod', allowed: 'GET, HEAD, OPTIONS' });
    expect(found('PATCH', '/api/plants/import')).toEqual({ template: '/plants/{id}', method: 'PATCH', pathValues: { id: 'import' } });
  });

  it('answers a known path with the wrong method with the methods it allows', () => {
    expect(match('DELETE', '/api/plants')).toEqual({ kind: 'wrongMethod', allowed: 'GET, POST, HEAD, OPTIONS' });
    expect(match('GET', '/api/plants/1')).toEqual({ kind: 'wrongMethod', allowed: 'PATCH, OPTIONS' });
  });

  it('knows no other path: other literals, an empty or malformed segment, another length, outside the base', () => {
    for (const path of ['/api/plantz', '/api/plants/', '/api/plants/%ZZ', '/api/plants/1/2', '/api/webhooks/endpoints//deliveries', '/api', '/plants', '/apiplants', '/api/Plants']) {
      expect(refusedAs('GET', path), path).toBe('routeNotFound');
    }
  });
});
