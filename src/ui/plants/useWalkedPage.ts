'use client';

import { useEffect, useMemo, useState } from 'react';

import { DEFAULT_SORT, type PlantPage, type PlantPageInput } from '@/shared/plant-table';
import { trpc } from '@/ui/trpc';

import { sameCursor } from './url-state';
import { AUTO_CONTINUATIONS, type Chain, chainFor, continuationOf, fullAt, joinWalked } from './walked-page';

/**
 * The page the view shows: `first` (plants.page's answer for the address), and when its walk stopped before the
 * page was full, the answers of the requests that go on from where each stopped, one at a time (walked-page.ts).
 * `key` names the page (its address): a new one starts again; the same one answered again keeps what it has
 * while its walk stopped at the same place (chainFor).
 */
export function useWalkedPage(input: PlantPageInput, first: PlantPage | undefined, key: string, settled: boolean) {
  const utils = trpc.useUtils();
  const [chain, setChain] = useState<Chain>({ of: key, basis: null, more: [], allowed: AUTO_CONTINUATIONS, halted: false });
  const current = useMemo(() => chainFor(chain, key, first), [chain, key, first]);
  const ended = current.ended === true;
  const page = useMemo(() => {
    // A page that found no row before its order ended shows what the server served instead (the nearest page
    // that has some); the view's address follows it, as for any page that ran empty.
    if (current.instead && settled) return current.instead;
    const joined = first && settled ? joinWalked(first, current.more, fullAt(first, input.size)) : first;
    // The order ended where the last walk stopped: nothing more follows (forwards), and nothing is being looked for.
    if (!joined || !ended) return joined;
    return { ...joined, walkStopped: null, ...(joined.walkStopped?.direction === 'forwards' ? { hasNext: false } : {}) };
  }, [first, settled, current.more, current.instead, input.size, ended]);
  // A full page asks nothing more, even when its walk stopped right after its last row: Next page goes on.
  const stop = settled && page && first && page.rows.length < fullAt(first, input.size) ? (page.walkStopped ?? null) : null;
  const searching = stop !== null && !current.halted && current.more.length < current.allowed;

  useEffect(() => {
    if (!searching || !stop) return;
    let gone = false;
    // A request no longer wanted (Stop, another page, the view gone) is cancelled, not left to run and pile up.
    const abort = new AbortController();
    const cursor = continuationOf(stop, input.sort?.key ?? DEFAULT_SORT.key);
    // Going forwards the page keeps the first answer's counts, so the requests that go on count nothing.
    utils.client.plants.page.query({ ...input, cursor, ...(stop.direction === 'forwards' ? { counts: false } : {}) }, { signal: abort.signal }).then(
      (answer) => {
        if (gone) return;
        // Another page than asked for: the server found no row from there to the end of the order (it then
        // serves the nearest page that has some: the last going forwards, the first going backwards), or the row
        // the walk stopped at was deleted meanwhile (the first page). Either way nothing more is joined.
        if (!sameCursor(answer.cursor, cursor)) {
          const found = (first?.rows.length ?? 0) + current.more.reduce((sum, more) => sum + more.rows.length, 0);
          setChain({ ...current, halted: true, ended: answer.cursor?.kind === (cursor.kind === 'after' ? 'last' : undefined), ...(found === 0 ? { instead: answer } : {}) });
        }
        else setChain({ ...current, more: [...current.more, answer] });
      },
      () => {
        if (!gone) setChain({ ...current, halted: true });
      },
    );
    return () => {
      gone = true;
      abort.abort();
    };
    // One request per step: a new key, a new answer, or the person's stop or go-on.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, current.basis, current.more.length, current.allowed, current.halted, searching]);

  return {
    page,
    /** Where the shown page's walk stopped (null once it is full or the order ended). */
    stop,
    searching,
    /** Stops asking (the person's Stop). */
    halt: () => setChain({ ...current, halted: true }),
    /** Asks on for another AUTO_CONTINUATIONS requests ("Search further"). */
    resume: () => setChain({ ...current, halted: false, allowed: current.more.length + AUTO_CONTINUATIONS }),
  };
}
