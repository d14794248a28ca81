import 'server-only';

import type { Context } from '@/server/trpc/init';
import { AppError } from '@/shared/errors';
import { IMPORT_APPLY_ROWS_PER_UNIT, IMPORT_PART_ROWS_PER_UNIT } from '@/shared/limits';

import type { TakeUnits } from './apply';

/**
 * What an import costs against the token's bucket, in one place (docs/api.md, "Rate limits"). Every call pays
 * the door's unit, and a part its body's units (one per 8 KiB) like any body; beyond that:
 */

/** A part: its rows, once read and before they are looked up and kept. */
export const partUnits = (rows: number): number => Math.ceil(rows / IMPORT_PART_ROWS_PER_UNIT);

/** The apply: its rows, slice by slice, before each slice runs. */
export const applyUnits = (rows: number): number => Math.ceil(rows / IMPORT_APPLY_ROWS_PER_UNIT);

/**
 * The bucket of the call that asked for the apply, for the slices that follow it in the background: the call's
 * own charge (ctx.charge), whose refusal says when to try again (its Retry-After), so the apply waits for its
 * units as the export does, rather than failing half-way.
 */
export function takeUnitsOf(ctx: Pick<Context, 'charge' | 'responseHints'>): TakeUnits {
  return async (units) => {
    try {
      await ctx.charge(units);
      return undefined;
    } catch (error) {
      if (!(error instanceof AppError) || error.kind !== 'tooManyRequests') throw error;
      return { retryAfterMs: 1000 * Number(ctx.responseHints.headers?.['Retry-After'] ?? 1) };
    }
  };
}
