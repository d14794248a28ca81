import { type AnyTRPCRouter, callTRPCProcedure, type TRPCProcedureType } from '@trpc/server';

import type { Context } from './init';

/** A procedure as a door calls it: its path in the router and its type. */
export type ProcedureRef = { path: string; type: TRPCProcedureType };

/**
 * How the REST and MCP doors call a procedure: with tRPC's own `callTRPCProcedure` (what its HTTP adapter and
 * its server-side caller run), the door's context and the input the door assembled. The procedure's
 * guard, input and output parsing and errors apply exactly as on the tRPC door; without the caller's
 * proxy, nothing is built per call but the call's options. Throws what the procedure throws (a TRPCError).
 * `signal` ends what the procedure streams (a file: its client went away).
 */
export function createProcedureCaller(router: AnyTRPCRouter) {
  return function callProcedure(procedure: ProcedureRef, input: unknown, ctx: Context, signal?: AbortSignal): Promise<unknown> {
    return callTRPCProcedure({ router, path: procedure.path, type: procedure.type, ctx, getRawInput: async () => input, signal, batchIndex: 0 });
  };
}

export type CallProcedure = ReturnType<typeof createProcedureCaller>;
