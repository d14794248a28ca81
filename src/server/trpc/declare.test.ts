import { initTRPC } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { appRouter } from '@/server/app-router';
import type { AuthState } from '@/server/auth/auth-state';
import { AppError } from '@/shared/errors';

import { contextFor, createCallerFactory, createTRPCRouter, proceduresOf, protectedProcedure } from './init';

/**
 * Every procedure declares what a call costs (init.ts, `Cost`): the builder offers no query, mutation or
 * subscription before `.declare()`, the router refuses a procedure made around that, and the declared units are
 * taken from the call's bucket before its resolver runs.
 */
const member: AuthState = { status: 'signedIn', tokenId: 1, actor: { userId: 1, name: 'declare-member', role: 'member' } };

describe('a procedure declares its cost', () => {
  it('holds for every procedure of the app', () => {
    const procedures = proceduresOf(appRouter);
    expect(procedures.length).toBeGreaterThan(20);
    expect(procedures.filter(([, procedure]) => procedure._def.meta?.cost === undefined || procedure._def.meta.errors === undefined).map(([path]) => path)).toEqual([]);
  });

  it('cannot be made without one: the builder has no query before .declare()', () => {
    // @ts-expect-error: a procedure without a declared cost does not type-check.
    expect(() => protectedProcedure.query(() => 'free')).toThrow(TypeError);
    // @ts-expect-error: nor does one with an input and no declaration.
    expect(() => protectedProcedure.input(z.object({})).mutation(() => 'free')).toThrow(TypeError);
  });

  it('is refused by the router when a procedure was made around the builder', () => {
    const stray = initTRPC.context<object>().create().procedure.query(() => 'free');
    expect(() => createTRPCRouter({ stray } as never)).toThrow(/procedures without a declared cost and errors \(\.declare\(\{ cost, errors \}\)\): stray/);
  });
});

describe('the declared cost', () => {
  const ran: string[] = [];
  const router = createTRPCRouter({
    rows: protectedProcedure
      .input(z.object({ rows: z.number() }))
      .declare({ cost: ({ rows }) => rows / 10, errors: {} })
      .query(({ input }) => ran.push(`rows ${input.rows}`)),
    counted: protectedProcedure
      .input(z.object({ of: z.string() }))
      .declare({ cost: async ({ of }, { actor }) => (actor.name === 'declare-member' ? of.length : 0), errors: {} })
      .mutation(({ input }) => ran.push(`counted ${input.of}`)),
    fixed: protectedProcedure.declare({ cost: 3, errors: {} }).query(() => ran.push('fixed')),
  });

  /** A caller whose bucket holds `left` units beyond the door's one, and the charges it was asked for. */
  function callerWith(left: number) {
    const charges: number[] = [];
    let bucket = left;
    const context = contextFor(member, 'declare-test', (units) => {
      charges.push(units);
      if (units > bucket) return { message: 'too many requests for this token', headers: { 'Retry-After': '1' }, retryAfterMs: 1_000 };
      bucket -= units;
      return undefined;
    });
    return { caller: createCallerFactory(router)(context), charges };
  }

  it('charges the units beyond the door’s one, from the parsed input and the caller, before the resolver', async () => {
    const { caller, charges } = callerWith(1_000);
    await caller.rows({ rows: 250 });
    await caller.counted({ of: 'twelve chars' });
    await caller.fixed();
    // Whole units, the door's one left out: 25 − 1, 12 − 1, 3 − 1.
    expect(charges).toEqual([24, 11, 2]);
    expect(ran.splice(0)).toEqual(['rows 250', 'counted twelve chars', 'fixed']);
  });

  it('charges nothing more for a call of one unit, rounds up, and never below the door’s unit', async () => {
    const { caller, charges } = callerWith(1_000);
    await caller.rows({ rows: 1 });
    await caller.rows({ rows: 11 });
    await caller.counted({ of: '' });
    expect(charges).toEqual([1]);
    ran.splice(0);
  });

  it('does no work when the charge is refused', async () => {
    const { caller } = callerWith(5);
    await expect(caller.rows({ rows: 1_000 })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS', cause: expect.any(AppError) });
    await expect(caller.counted({ of: 'more than five' })).rejects.toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(ran).toEqual([]);
  });
});
