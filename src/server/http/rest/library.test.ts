import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it, vi } from 'vitest';

import { projectRoot } from '@/server/paths';
import { appRouter } from '@/server/app-router';
import { contextFor } from '@/server/trpc/init';
import { signIn } from '@test-support/actors';

import { createProcedureCaller } from './library';
import { buildRouteTable } from './routing';

// Counts how often trpc-to-openapi's handler is built: each build compiles every route's regexp.
const library = vi.hoisted(() => ({ builds: 0 }));
vi.mock('trpc-to-openapi', async (importOriginal) => {
  const original = await importOriginal<typeof import('trpc-to-openapi')>();
  return {
    ...original,
    createOpenApiNodeHttpHandler: (...options: Parameters<typeof original.createOpenApiNodeHttpHandler>) => {
      library.builds += 1;
      return original.createOpenApiNodeHttpHandler(...options);
    },
  };
});

const match = buildRouteTable(appRouter, '/api');
const route = (method: string, path: string) => {
  const found = match(method, path);
  if (found.kind !== 'found') throw new Error(`no route for ${method} ${path}`);
  return found;
};

/**
 * library.ts leans on three internals of trpc-to-openapi 3.3.0 (see its header). These tests fail loudly
 * when an upgrade changes any of them, before a REST request could.
 */
describe('the trpc-to-openapi adapter', () => {
  it('is written for trpc-to-openapi 3.3.0: re-check library.ts when this changes', () => {
    const manifest = path.join(projectRoot, 'node_modules', 'trpc-to-openapi', 'package.json');
    expect(JSON.parse(readFileSync(manifest, 'utf8')).version).toBe('3.3.0');
  });

  it('builds the library handler once, and calls procedures with the exact input, never building a fetch Request', async () => {
    const buildsBefore = library.builds;
    const callProcedure = createProcedureCaller(appRouter);
    const { auth } = (await signIn('library-exact')).context;

    // (1) A real Request would be built if the library did not take ours as one; count any that are.
    const OriginalRequest = globalThis.Request;
    let requestsBuilt = 0;
    globalThis.Request = class extends OriginalRequest {
      constructor(...args: ConstructorParameters<typeof Request>) {
        super(...args);
        requestsBuilt += 1;
      }
    };
    try {
      // (2) The body the library sees is ours ({}): the exact one reaches the procedure through the context.
      const create = route('POST', '/api/plants');
      const context = contextFor(auth);
      context.exactRestInput = { id: 9007199254740993n, name: 'Exact' };
      const created = await callProcedure(create.route, '/plants', new URLSearchParams(), { id: 9007199254740992, name: 'Exact' }, context);
      expect(created).toEqual({ ok: true, json: '{"id":9007199254740993,"name":"Exact"}' });

      // (3) Only declared query parameters reach it, `constructor` and `__proto__` included as data.
      const list = route('GET', '/api/plants');
      const listed = await callProcedure(list.route, '/plants', new URLSearchParams('limit=1&constructor=1&__proto__=x'), undefined, contextFor(auth));
      expect(listed).toEqual({ ok: true, json: '[{"id":9007199254740993,"name":"Exact"}]' });
    } finally {
      globalThis.Request = OriginalRequest;
    }
    expect(requestsBuilt).toBe(0);
    expect(library.builds).toBe(buildsBefore + 1);
  });

  it('reports a validation failure with the field and where it came from', async () => {
    const callProcedure = createProcedureCaller(appRouter);
    const { auth } = (await signIn('library-invalid')).context;
    const list = route('GET', '/api/plants');
    const outcome = await callProcedure(list.route, '/plants', new URLSearchParams('limit=0'), undefined, contextFor(auth));
    expect(outcome).toMatchObject({ ok: false, problem: { kind: 'invalidQueryParameter', field: 'limit' } });
  });
});
