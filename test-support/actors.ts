import { TRPCError } from '@trpc/server';
import { expect } from 'vitest';

import { appRouter } from '@/server/app-router';
import type { Actor } from '@/server/auth/permissions';
import { resolveBearer } from '@/server/tokens/bearer';
import { problemFromError } from '@/server/problems';
import { issueToken } from '@/server/tokens/service';
import { contextFor, createCallerFactory } from '@/server/trpc/init';

const createCaller = createCallerFactory(appRouter);

/** A tRPC caller for an Authorization header, outside HTTP: the same bearer rule as the doors. */
export async function callerFor(authorization: string | null) {
  const context = contextFor(await resolveBearer(authorization));
  return { caller: createCaller(context), context };
}

/** A user with a real token in the test database, and a tRPC caller acting as them. */
export async function signIn(userName: string, role: 'admin' | 'member' = 'member') {
  const { token } = await issueToken({ userName, role });
  return { token, ...(await callerFor(`Bearer ${token}`)) };
}

/** The actor a signIn() acts as, for code under test that takes one (a query, a service) rather than a caller. */
export function actorOf(signedIn: Awaited<ReturnType<typeof signIn>>): Actor {
  const { auth } = signedIn.context;
  if (auth.status !== 'signedIn') throw new Error('not signed in');
  return auth.actor;
}

/**
 * How an in-process call failed: its tRPC code, and the error value, message and field a client reads
 * (`input` is the call's input, for the field of a validation error).
 */
export async function failureOf(promise: Promise<unknown>, input?: unknown) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TRPCError);
  return { code: (error as TRPCError).code, ...problemFromError(error, input) };
}
