import type { AddressInfo } from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import type { Logger } from '@/server/log';
import { createTRPCRouter, protectedProcedure } from '@/server/trpc/init';
import { signIn } from '@test-support/actors';

import { createFront } from '../front';
import { startHttpServer } from '../server';

/**
 * The REST chain's kept answers (kept-answers.ts) over real HTTP, in this process, with a procedure whose version
 * this test moves: what the e2e suites cannot time, a commit between the version an ETag names and the rows.
 */
const log: Logger = { info: () => {}, warn: () => {}, error: () => {} };

let version = 1;
let calls = 0;
let commitDuringCall = false;
const router = createTRPCRouter({
  counted: protectedProcedure
    .meta({ openapi: { method: 'GET', path: '/counted' }, conditional: () => `all:${version}` })
    .input(z.object({ limit: z.string().optional() }))
    .output(z.object({ call: z.number(), version: z.number() }))
    .declare({ cost: 1, errors: {} })
    .query(async () => {
      calls++;
      // The rows of this answer are read after a commit the ETag's version does not name.
      if (commitDuringCall) version++;
      return { call: calls, version };
    }),
});

const front = createFront({
  router,
  log,
  checkHealth: async () => {},
  pages: async (_request, response) => void response.end(),
  config: { RATE_LIMIT_PER_TOKEN: null, RATE_LIMIT_AUTH_FAILURES: null, TRUST_PROXY: null, CORS_ALLOWED_ORIGINS: null, PUBLIC_URL: undefined },
});
const running = await startHttpServer(front, { port: 0, hostname: '127.0.0.1', maxConnections: 100, maxConnectionsPerAddress: 1000, trustProxy: null, log });
afterAll(() => running.close());
const base = `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
const { token } = await signIn('chain-kept', 'admin');

async function get(query = '', headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/api/counted${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: response.status, etag: response.headers.get('etag'), body: await response.text() };
}

describe('kept answers in the REST chain', () => {
  it('answers a plain GET asked a third time from the 200 kept for its ETag, without the procedure', async () => {
    const first = await get('?limit=1');
    expect(first.status).toBe(200);
    // Asked once, a query keeps nothing but its Link; asked again, it runs once more and keeps its body.
    expect(JSON.parse((await get('?limit=1')).body)).toEqual({ call: 2, version: 1 });
    const kept = await get('?limit=1');
    expect(JSON.parse(kept.body)).toEqual({ call: 2, version: 1 });
    expect(await get('?limit=1')).toEqual(kept);
    expect(calls).toBe(2);
    // Another input is another answer; a new version, another ETag.
    expect(JSON.parse((await get('?limit=2')).body)).toEqual({ call: 3, version: 1 });
    version++;
    expect(JSON.parse((await get('?limit=1')).body)).toEqual({ call: 4, version: 2 });
  });

  it('keeps no body read after a commit its ETag does not name', async () => {
    await get('?limit=3');
    commitDuringCall = true;
    const raced = await get('?limit=3');
    commitDuringCall = false;
    expect(JSON.parse(raced.body)).toEqual({ call: calls, version });
    // A request that read the version before that commit (one waiting for its turn meanwhile) makes the same
    // ETag: it must not be answered bytes read after the commit under it. Here the version is set back for it.
    version--;
    const before = await get('?limit=3');
    expect(before.etag).toBe(raced.etag);
    expect(JSON.parse(before.body)).toEqual({ call: JSON.parse(raced.body).call + 1, version });
    version++;
    // What is read under an unmoved version is kept as always, from its second request on.
    const next = await get('?limit=3');
    expect(next.etag).not.toBe(raced.etag);
    await get('?limit=3');
    const callsNow = calls;
    expect((await get('?limit=3')).body).toBe((await get('?limit=3')).body);
    expect(calls).toBe(callsNow);
  });
});
