'use client';

import { useCallback, useEffect, useLayoutEffect, useMemo, useState } from 'react';

import { type StoredFields, toPlant } from '@/shared/plants';
import { type PlantRow } from '@/shared/plant-table';
import { trpc } from '@/ui/trpc';

/**
 * The live feed (plants.changes, tRPC's SSE subscription) as marks on the table and news beside it, so that
 * nothing moves under the person: a row changed or deleted elsewhere is marked where it stands, with its new
 * fields; a plant not on the page that was added or changed elsewhere is placed by asking the server for this
 * page again (rows only), which says whether it now belongs on it or not; a deletion of a plant not shown is
 * not on this page. Nothing moves until they ask (Refresh).
 *
 * This tab's own changes come back through the feed too, and are not news. A single change names its ids
 * before it is sent (`ownChange`). A bulk change learns its ids only call by call, so while one runs
 * (`ownWork`), and for OWN_ECHO_MS after, what the feed says is held, then let through without the ids the
 * bulk change reported (a change of one of them by somebody else after that is news again); a `resync` (more
 * than the feed sends one by one) in that time is this tab's own work too, and the page is read again, as
 * after any bulk change.
 */
export type LiveMark = { kind: 'deleted' } | { kind: 'created' | 'updated'; fields: StoredFields };
export const MARK_LABEL: Record<LiveMark['kind'], string> = { created: 'added elsewhere', updated: 'changed elsewhere', deleted: 'deleted elsewhere' };
type ChangeKind = 'created' | 'updated' | 'deleted';
type Placement = 'checking' | 'here' | 'notHere' | 'unknown';
type Placed = { kind: ChangeKind; placement: Placement; number: number };
export type LiveNews = { resync: boolean; here: ChangeKind[]; notHere: ChangeKind[]; unknown: ChangeKind[] };
type FeedEvent = { kind: 'live' } | { kind: 'resync' } | ({ kind: ChangeKind; id: bigint } & Partial<StoredFields>);
/** The page read again, rows only: what placement needs of it. */
export type PageAgain = { rows: readonly { id: bigint }[]; walkStopped: unknown };

const OWN_CHANGE_MS = 10_000;
/** How long after this tab's bulk change its echo may still arrive (a poll of another instance, a late commit). */
const OWN_ECHO_MS = 4_000;
/** Placement asks the server at most this often: one page read (rows only), charged as a page. */
const CHECK_EVERY_MS = 2_000;
const CHECK_DELAY_MS = 300;

type Sink = {
  shown: () => ReadonlySet<string>;
  readPage: () => Promise<PageAgain>;
  mark: (id: string, mark: LiveMark) => void;
  place: (update: (current: ReadonlyMap<string, Placed>) => ReadonlyMap<string, Placed>) => void;
  resync: () => void;
  ownResync: () => void;
};

/**
 * What the feed says, sorted: marks of rows shown, placements of plants not shown, held while this tab's bulk
 * work runs. Plain state outside React (timers, counters), handing its results to the hook's state.
 */
function createFeedSorter() {
  let current: Sink | null = null;
  const sink = () => current!;
  const own = new Map<string, number>();
  let eventNumber = 0;
  // Placement: one read at a time, CHECK_EVERY_MS apart. Each event of a plant has a number: an answer places
  // the plant only if no later event of it came meanwhile; a clear (another page, Refresh) drops older answers.
  let generation = 0;
  let toCheck = new Map<string, number>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running = false;
  let lastCheck = 0;
  // This tab's bulk work: what the feed says meanwhile waits, and leaves out the work's own ids.
  const hold = { works: 0, until: 0, events: [] as FeedEvent[], ids: new Set<string>(), timer: null as ReturnType<typeof setTimeout> | null };

  function scheduleCheck(): void {
    if (running || timer !== null) return;
    timer = setTimeout(() => void check(), Math.max(CHECK_DELAY_MS, lastCheck + CHECK_EVERY_MS - Date.now()));
  }

  async function check(): Promise<void> {
    timer = null;
    running = true;
    lastCheck = Date.now();
    const asked = generation;
    const ids = toCheck;
    toCheck = new Map();
    let answer: PageAgain | null;
    try {
      answer = await sink().readPage();
    } catch {
      answer = null;
    }
    running = false;
    if (asked === generation) {
      const onPage = new Set(answer?.rows.map((row) => row.id.toString()) ?? []);
      sink().place((current) => {
        const next = new Map(current);
        for (const [id, number] of ids) {
          const entry = next.get(id);
          if (entry?.number !== number) continue;
          // A page whose walk stopped short may lack rows that belong on it: not finding one there says nothing.
          const placement: Placement = answer === null ? 'unknown' : onPage.has(id) ? 'here' : answer.walkStopped ? 'unknown' : 'notHere';
          next.set(id, { ...entry, placement });
        }
        return next;
      });
    }
    if (toCheck.size > 0) scheduleCheck();
  }

  function apply(event: FeedEvent): void {
    if (event.kind === 'live') return;
    if (event.kind === 'resync') return sink().resync();
    const id = event.id.toString();
    const ownAt = own.get(id);
    if (ownAt !== undefined && Date.now() - ownAt < OWN_CHANGE_MS) return;
    if (sink().shown().has(id)) {
      const { kind, id: _id, ...fields } = event;
      sink().mark(id, kind === 'deleted' ? { kind } : { kind, fields: fields as StoredFields });
      return;
    }
    // A plant not shown that is deleted is not on this page; one added or changed may now belong on it.
    const placement: Placement = event.kind === 'deleted' ? 'notHere' : 'checking';
    const number = ++eventNumber;
    sink().place((current) => {
      // Added, then changed: still news of an added plant.
      const kind = current.get(id)?.kind === 'created' && event.kind === 'updated' ? 'created' : event.kind;
      return new Map(current).set(id, { kind, placement, number });
    });
    if (placement === 'checking') {
      toCheck.set(id, number);
      scheduleCheck();
    }
  }

  function release(): void {
    hold.timer = null;
    if (hold.works > 0) return;
    const wait = hold.until - Date.now();
    if (wait > 0) {
      hold.timer = setTimeout(release, wait);
      return;
    }
    const { events, ids } = hold;
    hold.events = [];
    hold.ids = new Set();
    let resyncHeld = false;
    for (const event of events) {
      if (event.kind === 'resync') resyncHeld = true;
      else if (event.kind === 'live' || !ids.has(event.id.toString())) apply(event);
    }
    if (resyncHeld) sink().ownResync();
  }

  return {
    /** What the sorter hands its results to (the hook's state, the rows shown now): set after every render. */
    connect(next: Sink): void {
      current = next;
    },
    take(event: FeedEvent): void {
      if (hold.works > 0 || Date.now() < hold.until) hold.events.push(event);
      else apply(event);
    },
    own(keys: readonly string[]): void {
      const now = Date.now();
      for (const key of keys) own.set(key, now);
    },
    async work<T>(run: (changed: (ids: Iterable<bigint>) => void) => Promise<T>): Promise<T> {
      hold.works += 1;
      try {
        return await run((ids) => {
          for (const id of ids) hold.ids.add(id.toString());
        });
      } finally {
        hold.works -= 1;
        hold.until = Date.now() + OWN_ECHO_MS;
        if (hold.timer !== null) clearTimeout(hold.timer);
        hold.timer = setTimeout(release, OWN_ECHO_MS);
      }
    },
    clear(): void {
      generation += 1;
      toCheck = new Map();
    },
    dispose(): void {
      if (timer !== null) clearTimeout(timer);
      if (hold.timer !== null) clearTimeout(hold.timer);
    },
  };
}

/** `readPage` reads the page as the address names it again, rows only; `onOwnResync` reads the shown page again. */
export function useLiveMarks(rows: readonly PlantRow[], readPage: () => Promise<PageAgain>, onOwnResync: () => void) {
  const [marks, setMarks] = useState<ReadonlyMap<string, LiveMark>>(new Map());
  const [placed, setPlaced] = useState<ReadonlyMap<string, Placed>>(new Map());
  const [resync, setResync] = useState(false);
  /** The server said the stream is registered: from then on no change is missed. */
  const [live, setLive] = useState(false);

  const [sorter] = useState(createFeedSorter);
  useLayoutEffect(() => {
    const shown = new Set(rows.map((row) => row.id.toString()));
    sorter.connect({
      shown: () => shown,
      readPage,
      mark: (id, mark) => setMarks((current) => new Map(current).set(id, mark)),
      place: setPlaced,
      resync: () => setResync(true),
      ownResync: onOwnResync,
    });
  }, [sorter, rows, readPage, onOwnResync]);
  useEffect(() => () => sorter.dispose(), [sorter]);

  const subscription = trpc.plants.changes.useSubscription(undefined, {
    onError: () => setLive(false),
    onData: ({ data }) => {
      const event = data as FeedEvent;
      if (event.kind === 'live') setLive(true);
      else sorter.take(event);
    },
  });

  /**
   * The ids this tab is about to change: their echo from the feed is skipped, and a mark of theirs goes (the
   * person's own save of a marked row supersedes it; the page is read again after it).
   */
  const ownChange = useCallback(
    (ids: Iterable<bigint>) => {
      const keys = [...ids].map(String);
      sorter.own(keys);
      setMarks((current) => {
        if (!keys.some((key) => current.has(key))) return current;
        const next = new Map(current);
        for (const key of keys) next.delete(key);
        return next;
      });
    },
    [sorter],
  );

  /** Runs this tab's bulk change; it reports the ids each call changed through the function it is given. */
  const ownWork = useCallback(<T,>(work: (changed: (ids: Iterable<bigint>) => void) => Promise<T>) => sorter.work(work), [sorter]);

  const clear = useCallback(() => {
    sorter.clear();
    setMarks(new Map());
    setPlaced(new Map());
    setResync(false);
  }, [sorter]);

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

  // What is news: a plant the page shows by now (read again after an edit) is no longer news of it.
  const news = useMemo<LiveNews>(() => {
    const showing = new Set(rows.map((row) => row.id.toString()));
    const result: LiveNews = { resync, here: [], notHere: [], unknown: [] };
    for (const [id, { kind, placement }] of placed) {
      if (placement === 'checking' || (placement === 'here' && showing.has(id))) continue;
      result[placement].push(kind);
    }
    return result;
  }, [placed, rows, resync]);

  // Read on every render, so the hook re-renders when it changes (tRPC tracks the fields a render reads).
  const connected = subscription.status === 'pending';
  return { marks, rows: overlaid, news, clear, ownChange, ownWork, live: live && connected };
}

/** The words for what the feed brought that the rows do not show (empty: nothing). */
export function newsText(news: LiveNews): string {
  if (news.resync) return 'Many plants changed elsewhere meanwhile.';
  const parts: string[] = [];
  const here = news.here.length;
  // Short: the line shares the heading's width with the view's buttons (whole in its title and to screen readers).
  const belong = here === 1 ? 'belongs here' : 'belong here';
  if (here > 0) parts.push(news.here.every((kind) => kind === 'created') ? `${here === 1 ? '1 new plant' : `${count.format(here)} new plants`} ${belong}` : `${plants(here)} ${verbs(news.here)} elsewhere ${belong}`);
  const notHere = news.notHere.length;
  if (notHere > 0) parts.push(`${here > 0 ? `${count.format(notHere)} more` : plants(notHere)} ${verbs(news.notHere)} elsewhere, not on this page`);
  const unknown = news.unknown.length;
  if (unknown > 0) parts.push(`${parts.length > 0 ? `${count.format(unknown)} more` : plants(unknown)} ${verbs(news.unknown)} elsewhere`);
  return parts.length === 0 ? '' : `${parts.join('; ')}.`;
}

const count = new Intl.NumberFormat();
const plants = (n: number) => (n === 1 ? '1 plant' : `${count.format(n)} plants`);
const VERB: Record<ChangeKind, string> = { created: 'added', updated: 'changed', deleted: 'deleted' };
function verbs(kinds: readonly ChangeKind[]): string {
  const present = (['created', 'updated', 'deleted'] as const).filter((kind) => kinds.includes(kind)).map((kind) => VERB[kind]);
  return present.length <= 1 ? (present[0] ?? '') : `${present.slice(0, -1).join(', ')} or ${present[present.length - 1]}`;
}
