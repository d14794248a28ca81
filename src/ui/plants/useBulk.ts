'use client';

import { useRef, useState } from 'react';

import { type BulkSelection } from '@/shared/plant-table';
import { BULK_MAX } from '@/shared/limits';
import { trpc } from '@/ui/trpc';

import { problemOf, waitingOutRateLimit } from '../problems';

/**
 * Runs a bulk change over a whole selection, call by call (each call takes at most BULK_MAX plants; a
 * "matching" selection goes on from where the last call stopped), waiting and going on when the server
 * says the token's rate limit needs a moment (429). Reports progress as it goes, and stops between two calls
 * when the person asks (`stop`): what the calls before did stays done, and can be undone like the rest.
 * The work is the page's own, call by call, not a job on the server: closing the tab stops it too.
 */
export type BulkAction =
  | { kind: 'delete'; keepForUndo: boolean }
  | { kind: 'retag'; tag: string | null; onlyFrom?: string | null }
  /** Puts back plants this person deleted from the page (the undo of a delete). */
  | { kind: 'restore' };
/** What the calls did: the ids changed (what undo needs), and for a re-tag each one's tag before. */
export type BulkResult = {
  doneCount: number;
  doneIds: bigint[];
  gone: number;
  failed: string | null;
  /** Stopped by the person before the selection was worked through. */
  stopped: boolean;
  /** A re-tag's plants by the tag each had before (null: untagged). */
  previous: Map<string | null, bigint[]>;
};
export type BulkProgress = { done: number; of: number; ofExact: boolean; stopping: boolean };

type Outcome = { done: bigint[]; gone: bigint[]; nextAfter?: bigint | null; previous?: { id: bigint; tag: string | null }[] };

export function useBulkRunner() {
  const utils = trpc.useUtils();
  const [progress, setProgress] = useState<BulkProgress | null>(null);
  const stopAsked = useRef(false);

  const call = (action: BulkAction, selection: BulkSelection): Promise<Outcome> =>
    waitingOutRateLimit(async () => {
      if (action.kind === 'delete') return utils.client.plants.deleteMany.mutate({ selection, keepForUndo: action.keepForUndo });
      if (action.kind === 'retag') return utils.client.plants.retagMany.mutate({ selection, tag: action.tag, ...(action.onlyFrom === undefined ? {} : { onlyFrom: action.onlyFrom }) });
      if (selection.kind !== 'ids') throw new Error('a restore takes ids');
      const outcome = await utils.client.plants.restore.mutate({ ids: selection.ids });
      return { done: outcome.restored, gone: [...outcome.taken, ...outcome.missing] };
    });

  /** The calls of one selection, in turn: ids BULK_MAX at a time, or "matching" from where the last call stopped. */
  async function* calls(action: BulkAction, selection: BulkSelection): AsyncGenerator<Outcome> {
    if (selection.kind === 'ids') {
      for (let start = 0; start < selection.ids.length; start += BULK_MAX) yield await call(action, { kind: 'ids', ids: selection.ids.slice(start, start + BULK_MAX) });
      return;
    }
    let after: bigint | undefined;
    for (;;) {
      const outcome = await call(action, { ...selection, ...(after === undefined ? {} : { after }) });
      yield outcome;
      if (outcome.nextAfter === null || outcome.nextAfter === undefined) return;
      after = outcome.nextAfter;
    }
  }

  /**
   * `total`: how many the selection holds, exactly or (`totalExact` false) at least: what the progress counts against.
   * `changed` hears each call's changed ids as it answers (the live feed's echo of them is this tab's own).
   * Several parts (an undo of a re-tag writes each earlier tag back) run as one, counted against one total.
   */
  async function run(
    parts: { action: BulkAction; selection: BulkSelection }[],
    total: number,
    totalExact = true,
    changed?: (ids: bigint[]) => void,
  ): Promise<BulkResult> {
    const result: BulkResult = { doneCount: 0, doneIds: [], gone: 0, failed: null, stopped: false, previous: new Map() };
    const report = () => {
      const done = result.doneCount + result.gone;
      setProgress({ done, of: Math.max(total, done), ofExact: totalExact || done >= total, stopping: stopAsked.current });
    };
    stopAsked.current = false;
    report();
    try {
      work: for (const { action, selection } of parts) {
        for await (const outcome of calls(action, selection)) {
          changed?.(outcome.done);
          result.doneCount += outcome.done.length;
          result.doneIds.push(...outcome.done);
          result.gone += outcome.gone.length;
          for (const { id, tag } of outcome.previous ?? []) {
            const ids = result.previous.get(tag) ?? [];
            ids.push(id);
            result.previous.set(tag, ids);
          }
          report();
          if (stopAsked.current) {
            result.stopped = true;
            break work;
          }
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

  /** Asks the running change to stop after the call under way. */
  function stop() {
    stopAsked.current = true;
    setProgress((current) => (current ? { ...current, stopping: true } : current));
  }

  return { run, stop, progress };
}
