import { describe, expect, it, vi } from 'vitest';

import { signIn } from '@/test/actors';
import { createContext } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

import { createRestEdge } from './edge';

// Counts how often the edge builds trpc-to-openapi's handler, which compiles every route on each build.
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

const log = { info: () => {}, error: () => {} };
const checkHealth = async () => true;

describe('REST edge over trpc-to-openapi', () => {
  it('builds the library handler once for all requests, and not before the first call of a procedure', async () => {
    const edge = createRestEdge({ router: appRouter, createContext, log, checkHealth });
    const buildsBefore = library.builds;
    const { token } = await signIn('library-once');
    const headers = { authorization: `Bearer ${token}` };
    expect((await edge(new Request('http://plants.test/api/health'))).status).toBe(200);
    expect(library.builds).toBe(buildsBefore);

    const created = await edge(
      new Request('http://plants.test/api/plants', { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: '{"id": 9007199254740993, "name": "Once"}' }),
    );
    expect(await created.text()).toBe('{"id":9007199254740993,"name":"Once"}');
    const listed = await edge(new Request('http://plants.test/api/plants?limit=5', { headers }));
    expect(await listed.text()).toBe('[{"id":9007199254740993,"name":"Once"}]');
    const deleted = await edge(new Request('http://plants.test/api/plants/9007199254740993', { method: 'DELETE', headers }));
    expect(deleted.status).toBe(204);
    const again = await edge(new Request('http://plants.test/api/plants/9007199254740993', { method: 'DELETE', headers }));
    expect(again.status).toBe(404);
    expect(library.builds).toBe(buildsBefore + 1);
  });

  it('keeps concurrent calls apart: each request gets its own outcome', async () => {
    const edge = createRestEdge({ router: appRouter, createContext, log, checkHealth });
    const users = await Promise.all(['library-a', 'library-b', 'library-c'].map((name) => signIn(name)));
    const creates = users.map(({ token }, index) =>
      edge(
        new Request('http://plants.test/api/plants', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: index === 1 ? '{"id": 1, "name": ""}' : `{"id": ${9007199254740995n + BigInt(index) * 2n}, "name": "P${index}"}`,
        }),
      ),
    );
    const answers = await Promise.all((await Promise.all(creates)).map(async (response) => [response.status, await response.text()]));
    expect(answers[0]).toEqual([200, '{"id":9007199254740995,"name":"P0"}']);
    expect(answers[1]![0]).toBe(400);
    expect(answers[2]).toEqual([200, '{"id":9007199254740999,"name":"P2"}']);
  });

  it('serves a host whose name starts with "api" (the base path is cut from the path, not from the URL)', async () => {
    const edge = createRestEdge({ router: appRouter, createContext, log, checkHealth });
    const { token } = await signIn('library-host');
    for (const origin of ['http://api:3000', 'http://api.plants.test']) {
      const response = await edge(new Request(`${origin}/api/plants?limit=1`, { headers: { authorization: `Bearer ${token}` } }));
      expect(response.status, origin).toBe(200);
    }
  });

  it('passes only the declared query parameters to the procedure, repeated ones included', async () => {
    const edge = createRestEdge({ router: appRouter, createContext, log, checkHealth });
    const { token, caller } = await signIn('library-query');
    for (const id of [11n, 12n, 13n]) await caller.plants.create({ id, name: `Q${id}` });
    const headers = { authorization: `Bearer ${token}` };
    const page = await edge(new Request('http://plants.test/api/plants?limit=1&after=11&other=x', { headers }));
    expect(await page.text()).toBe('[{"id":12,"name":"Q12"}]');
    expect(page.headers.get('link')).toBe('<http://plants.test/api/plants?limit=1&after=12>; rel="next"');
    const repeated = await edge(new Request('http://plants.test/api/plants?limit=1&limit=2', { headers }));
    expect(repeated.status).toBe(400);
    expect((await repeated.json()).error).toBe(40007);
  });
});
