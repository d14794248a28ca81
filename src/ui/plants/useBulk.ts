'use client';

import { useState } from 'react';

import { BULK_MAX, type BulkSelection } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { problemOf, waitingOutRateLimit } from '../problems';

/**
 * Runs a bulk change over a whole selection, call by call (each call takes at most BULK_MAX plants; a
 * "matching" selection goes on from where the last call stopped), waiting and going on when the server
 * says the token's rate limit needs a moment (429). Reports progress as it goes.
 */
export type BulkAction = { kind: 'delete'; keepForUndo: boolean } | { kind: 'retag'; tag: string | null };
/** `doneIds` only for a selection of ids (what undo needs); a "select all" of 100,000 keeps the count. */
export type BulkResult = { doneCount: number; doneIds: bigint[]; gone: number; failed: string | null };

export function useBulkRunner() {
  const utils = trpc.useUtils();
  const [progress, setProgress] = useState<{ done: number; of: number; ofExact: boolean } | null>(null);

  const call = (action: BulkAction, selection: BulkSelection) =>
    waitingOutRateLimit(() =>
      action.kind === 'delete'
        ? utils.client.plants.deleteMany.mutate({ selection, keepForUndo: action.keepForUndo })
        : utils.client.plants.retagMany.mutate({ selection, tag: action.tag }),
    );

  /**
   * `total`: how many the selection holds, exactly or (`totalExact` false) at least: what the progress counts against.
   * `changed` hears each call's changed ids as it answers (the live feed's echo of them is this tab's own).
   */
  async function run(action: BulkAction, selection: BulkSelection, total: number, totalExact = true, changed?: (ids: bigint[]) => void): Promise<BulkResult> {
    const result: BulkResult = { doneCount: 0, doneIds: [], gone: 0, failed: null };
    const record = (outcome: { done: bigint[]; gone: bigint[] }) => {
      changed?.(outcome.done);
      result.doneCount += outcome.done.length;
      if (selection.kind === 'ids') result.doneIds.push(...outcome.done);
      result.gone += outcome.gone.length;
      const done = result.doneCount + result.gone;
      setProgress({ done, of: Math.max(total, done), ofExact: totalExact || done >= total });
    };
    setProgress({ done: 0, of: total, ofExact: totalExact });
    try {
      if (selection.kind === 'ids') {
        for (let start = 0; start < selection.ids.length; start += BULK_MAX) record(await call(action, { kind: 'ids', ids: selection.ids.slice(start, start + BULK_MAX) }));
      } else {
        let after: bigint | undefined;
        for (;;) {
          const outcome = await call(action, { ...selection, ...(after === undefined ? {} : { after }) });
          record(outcome);
          if (outcome.nextAfter === null) break;
          after = outcome.nextAfter;
        }
      }
    } catch (error) {
      result.failed = problemOf(error).message;
    } finally {
      setProgress(null);
      await utils.plants.page.invalidate();
      void utils.plants.tags.invalidate();
    }
    return result;
  }

  return { run, progress };
}
