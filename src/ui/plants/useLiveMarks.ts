'use client';

import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';

import { type PlantRow, type StoredFields, toPlant } from '@/shared/plants';
import { trpc } from '@/ui/trpc';

/**
 * The live feed (plants.changes, tRPC's SSE subscription) as marks on the table: a row changed or deleted
 * under the person is marked where it stands, with its new fields; nothing moves until they ask
 * (Refresh). Changes elsewhere (new plants, rows on other pages) are counted for the banner. This tab's own
 * changes come back through the feed too, and are not news: `ownChange` says which ids to skip for a moment.
 */
export type LiveMark = { kind: 'deleted' } | { kind: 'created' | 'updated'; fields: StoredFields };

const OWN_CHANGE_MS = 10_000;

export function useLiveMarks(rows: readonly PlantRow[]) {
  const [marks, setMarks] = useState<ReadonlyMap<string, LiveMark>>(new Map());
  const [elsewhere, setElsewhere] = useState(0);
  const [resync, setResync] = useState(false);
  /** The server said the stream is registered: from then on no change is missed. */
  const [live, setLive] = useState(false);
  const own = useRef(new Map<string, number>());
  const shown = useRef(new Set<string>());
  useLayoutEffect(() => {
    shown.current = new Set(rows.map((row) => row.id.toString()));
  }, [rows]);

  const subscription = trpc.plants.changes.useSubscription(undefined, {
    onError: () => setLive(false),
    onData: ({ data: event }) => {
      if (event.kind === 'live') return setLive(true);
      if (event.kind === 'resync') {
        setResync(true);
        return;
      }
      const id = event.id.toString();
      const ownAt = own.current.get(id);
      if (ownAt !== undefined && Date.now() - ownAt < OWN_CHANGE_MS) return;
      if (shown.current.has(id)) {
        const { kind, id: _id, ...fields } = event;
        const mark: LiveMark = kind === 'deleted' ? { kind } : { kind, fields: fields as StoredFields };
        setMarks((current) => new Map(current).set(id, mark));
      } else {
        setElsewhere((count) => count + 1);
      }
    },
  });

  /** The ids this tab is about to change: their echo from the feed is skipped. */
  const ownChange = useCallback((ids: Iterable<bigint>) => {
    const now = Date.now();
    for (const id of ids) own.current.set(id.toString(), now);
  }, []);

  const clear = useCallback(() => {
    setMarks(new Map());
    setElsewhere(0);
    setResync(false);
  }, []);

  /** The rows as shown: a changed row with its new fields (the owner and creation time stay), in its old place. */
  const overlaid = useMemo(
    () =>
      rows.map((row) => {
        const mark = marks.get(row.id.toString());
        if (!mark || mark.kind === 'deleted') return row;
        const { owner, createdAt } = row;
        return { ...toPlant({ id: row.id, ...mark.fields }), ...(owner === undefined ? {} : { owner }), ...(createdAt === undefined ? {} : { createdAt }) };
      }),
    [rows, marks],
  );

  // Read on every render, so the hook re-renders when it changes (tRPC tracks the fields a render reads).
  const connected = subscription.status === 'pending';
  return { marks, rows: overlaid, elsewhere, resync, clear, ownChange, live: live && connected };
}
