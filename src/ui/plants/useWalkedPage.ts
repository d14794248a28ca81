'use client';

import { useEffect, useMemo, useState } from 'react';

import type { PlantPage, PlantPageInput } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

import { sameCursor } from './url-state';
import { AUTO_CONTINUATIONS, continuationOf, joinWalked } from './walked-page';

type Chain = { of: string; more: PlantPage[]; allowed: number; halted: boolean };
const NONE: PlantPage[] = [];

/**
 * The page the view shows: `first` (plants.page's answer for the address), and when its walk stopped before the
 * page was full, the answers of the requests that go on from where each stopped, one at a time (walked-page.ts).
 * `key` names the answer being continued (the address and when it was read): a new one starts again.
 */
export function useWalkedPage(input: PlantPageInput, first: PlantPage | undefined, key: string, settled: boolean) {
  const utils = trpc.useUtils();
  const [chain, setChain] = useState<Chain>({ of: key, more: [], allowed: AUTO_CONTINUATIONS, halted: false });
  const current = chain.of === key ? chain : { of: key, more: NONE, allowed: AUTO_CONTINUATIONS, halted: false };
  const page = useMemo(() => (first && settled ? joinWalked(first, current.more, input.size) : first), [first, settled, current.more, input.size]);
  // A full page asks nothing more, even when its walk stopped right after its last row: Next page goes on.
  const stop = settled && page && page.rows.length < input.size ? (page.walkStopped ?? null) : null;
  const searching = stop !== null && !current.halted && current.more.length < current.allowed;

  useEffect(() => {
    if (!searching || !stop) return;
    let gone = false;
    const cursor = continuationOf(stop);
    // Going forwards the page keeps the first answer's counts, so the requests that go on count nothing.
    utils.client.plants.page.query({ ...input, cursor, ...(stop.direction === 'forwards' ? { counts: false } : {}) }).then(
      (answer) => {
        if (gone) return;
        // The row it stopped at was deleted meanwhile, and the server served another page: the person goes on from there.
        if (!sameCursor(answer.cursor, cursor)) setChain({ ...current, halted: true });
        else setChain({ ...current, more: [...current.more, answer] });
      },
      () => {
        if (!gone) setChain({ ...current, halted: true });
      },
    );
    return () => {
      gone = true;
    };
    // One request per step: a new key, a new answer, or the person's stop or go-on.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, current.more.length, current.allowed, current.halted, searching]);

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
