import { type AnyTRPCProcedure, callTRPCProcedure, TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { describe, expect, it } from 'vitest';

import { appRouter } from '@/server/app-router';
import type { AuthState } from '@/server/auth/auth-state';
import { type Actor, can } from '@/server/auth/permissions';

import { type Context, contextFor, createCallerFactory, type ProcedureMeta } from './init';

/**
 * The guard is the one check in front of every procedure, whichever door calls it (init.ts, `guard`): the
 * REST and MCP doors through `callTRPCProcedure`, the tRPC door through tRPC's HTTP adapter, tests and tools
 * through a server-side caller. So every procedure of the app is called here each of those ways without a
 * valid token (401 before its input is read) and, where it needs a permission, as a member (403). A procedure
 * added without the guard, or a guard that some way of calling skips, fails here.
 */
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, AnyTRPCProcedure & { _def: { meta?: ProcedureMeta } }>);
const anonymous: AuthState[] = [{ status: 'missing' }, { status: 'invalid' }];
const memberActor: Actor = { userId: 1, name: 'guard-member', role: 'member' };
const member: AuthState = { status: 'signedIn', tokenId: 1, actor: memberActor };

/** The tRPC code a call ended with, or 'ran' when the procedure got past the guard to its input or its work. */
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ran';
  } catch (error) {
    return error instanceof TRPCError && (error.code === 'UNAUTHORIZED' || error.code === 'FORBIDDEN') ? error.code : 'ran';
  }
}

const ways: Record<string, (path: string, type: AnyTRPCProcedure['_def']['type'], context: Context) => Promise<string>> = {
  'callTRPCProcedure (REST, MCP)': (path, type, ctx) =>
    codeOf(callTRPCProcedure({ router: appRouter, path, type, ctx, getRawInput: async () => undefined, signal: undefined, batchIndex: 0 })),
  'a server-side caller': (path, _type, ctx) => {
    // The caller nests as the routers do (plants.imports.list): walk the path to the procedure.
    const procedure = path.split('.').reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], createCallerFactory(appRouter)(ctx));
    return codeOf((procedure as (input?: unknown) => Promise<unknown>)());
  },
  "tRPC's HTTP adapter (the tRPC door)": async (path, type, ctx) => {
    if (type === 'subscription') return codeOf(callTRPCProcedure({ router: appRouter, path, type, ctx, getRawInput: async () => undefined, signal: undefined, batchIndex: 0 }));
    const url = `http://guard.invalid/api/trpc/${path}`;
    const request = type === 'query' ? new Request(url) : new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const response = await fetchRequestHandler({ router: appRouter, req: request, endpoint: '/api/trpc', createContext: () => ctx });
    return response.status === 401 ? 'UNAUTHORIZED' : response.status === 403 ? 'FORBIDDEN' : 'ran';
  },
};

describe('the guard in front of every procedure', () => {
  it('covers a router with procedures of every kind', () => {
    expect(procedures.length).toBeGreaterThan(20);
    expect(new Set(procedures.map(([, procedure]) => procedure._def.type))).toEqual(new Set(['query', 'mutation', 'subscription']));
    expect(procedures.some(([, procedure]) => procedure._def.meta?.permission && !can(memberActor, procedure._def.meta.permission))).toBe(true);
  });

  for (const [way, call] of Object.entries(ways)) {
    it(`refuses every procedure without a valid token, before its input, through ${way}`, async () => {
      for (const auth of anonymous) {
        const reached = [];
        for (const [path, procedure] of procedures) if ((await call(path, procedure._def.type, contextFor(auth))) !== 'UNAUTHORIZED') reached.push(path);
        expect(reached, `reached with a ${auth.status} token`).toEqual([]);
      }
    });

    it(`refuses a member every procedure that needs a permission members lack, through ${way}`, async () => {
      const reached = [];
      for (const [path, procedure] of procedures) {
        const permission = procedure._def.meta?.permission;
        if (permission === undefined || can(memberActor, permission)) continue;
        if ((await call(path, procedure._def.type, contextFor(member))) !== 'FORBIDDEN') reached.push(path);
      }
      expect(reached).toEqual([]);
    });
  }
});
