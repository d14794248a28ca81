'use client';

import { keepPreviousData } from '@tanstack/react-query';
import { Leaf, Plus } from 'lucide-react';
import { useRouter, useSearchParams } from 'next/navigation';
import { Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';

import { type PlantFieldName } from '@/shared/plants';
import { PLANT_SORT_KEYS, type PlantRow } from '@/shared/plant-table';
import { BULK_MAX } from '@/shared/limits';
import { trpc } from '@/ui/trpc';

import { takeHeadingFocus } from '../focus';
import { useNotices } from '../notices';
import { queryFallback, refreshFailure } from '../QueryFallback';
import { useSession } from '../session';
import { AddPlantDialog } from './AddPlantDialog';
import { BulkBar } from './BulkBar';
import { ColumnChooser } from './ColumnChooser';
import { useHiddenColumns } from './column-prefs';
import { OPTIONAL_COLUMNS, type OptionalColumn, PLANT_COLUMNS, type PlantColumn } from './columns';
import { countText } from './counts';
import { DeleteDialog, type Deleting } from './DeleteDialog';
import type { EditOutcome } from './EditRow';
import { ExportButton } from './ExportButton';
import { ImportButton } from './import/ImportButton';
import { Pager, rangeText } from './Pager';
import { type Editing, PlantsTable } from './PlantsTable';
import { RetagDialog } from './RetagDialog';
import { Toolbar } from './Toolbar';
import { type Cursor, hasFilters, plantsHref, type PlantsQuery, readPlantsQuery, sameCursor } from './url-state';
import { newsText, useLiveMarks } from './useLiveMarks';
import { useWalkedPage } from './useWalkedPage';
import { WalkStatus } from './WalkStatus';
import { usePlantNotices } from './usePlantNotices';
import { asBulkSelection, useSelection } from './useSelection';
import { useBulkRunner } from './useBulk';

/** The plants view. Its address holds its state (url-state.ts); reading it needs a Suspense boundary in a static export. */
export function PlantsView() {
  return (
    <Suspense
      fallback={
        <p className="placeholder" role="status">
          <span className="spinner" aria-hidden="true" /> Loading plants…
        </p>
      }
    >
      <PlantsViewInner />
    </Suspense>
  );
}

function PlantsViewInner() {
  const { user } = useSession();
  const isAdmin = user?.role === 'admin';
  const router = useRouter();
  const searchParams = useSearchParams();
  const query = useMemo(() => readPlantsQuery(new URLSearchParams(searchParams.toString())), [searchParams]);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => takeHeadingFocus(headingRef.current), []);
  const notices = useNotices();

  // An edit with changes is never dropped silently: moving away first asks the person to save or cancel it.
  const [editing, setEditing] = useState<Editing | null>(null);
  const dirty = useRef(false);
  const onEditDirty = useCallback((value: boolean) => {
    dirty.current = value;
  }, []);
  const blockedByEdit = () => {
    if (!editing || !dirty.current) return false;
    notices.show({ kind: 'warning', key: 'edit', content: 'Save the row you are editing (Enter) or cancel it (Escape) first: its changes are not saved yet.' });
    document.getElementById(`edit-plant-${editing.id.toString()}-${editing.column}`)?.focus();
    return true;
  };
  const go = (next: PlantsQuery, how: 'push' | 'replace' = 'push') => {
    if (how === 'push' && blockedByEdit()) return;
    router[how](plantsHref(next), { scroll: false });
  };

  // What the address says that the view cannot show (size=33, a 300-character q) leaves the address.
  useEffect(() => {
    const search = searchParams.toString();
    const shown = plantsHref(query);
    if (`/plants${search ? `?${search}` : ''}` !== shown) router.replace(shown, { scroll: false });
  }, [searchParams, query, router]);

  const filters = { ...(query.q ? { q: query.q } : {}), ...(query.tag ? { tag: query.tag } : {}), ...(query.owner && isAdmin ? { owner: query.owner } : {}) };
  const input = { size: query.size, sort: query.sort, ...(query.cursor ? { cursor: query.cursor } : {}), ...filters };
  // With the live feed on, what changes elsewhere is marked and counted (useLiveMarks): the rows are read again
  // when the person asks (Refresh) or acts, not when the window regains focus, which would move them unasked.
  const liveOn = useRef(false);
  const page = trpc.plants.page.useQuery(input, { placeholderData: keepPreviousData, refetchOnWindowFocus: () => !liveOn.current });
  const turning = page.isPlaceholderData;
  // A search whose walk stopped before the page was full asks on by itself (walked-page.ts).
  // Keyed by the address, not by when the answer came: a refetch (window focus, an edit) keeps a person's Stop
  // and the rows joined so far (useWalkedPage, chainFor).
  const walked = useWalkedPage(input, page.data, plantsHref(query), !turning);
  const data = walked.page;

  // The server served another page than the address names (that page emptied): the address follows.
  useEffect(() => {
    if (data && !turning && !sameCursor(data.cursor, query.cursor)) go({ ...query, cursor: data.cursor }, 'replace');
    // Only when an answer arrives.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, turning]);

  const utils = trpc.useUtils();
  const live = useLiveMarks(
    data?.rows ?? [],
    () => utils.client.plants.page.query({ ...input, counts: false }),
    () => void utils.plants.page.invalidate(),
  );
  useEffect(() => {
    liveOn.current = live.live;
  }, [live.live]);
  const news = newsText(live.news);
  const pageKey = plantsHref(query);
  // Another page, sort or filter: nothing is being edited and no mark of the old rows stays.
  const [shownKey, setShownKey] = useState(pageKey);
  if (shownKey !== pageKey) {
    setShownKey(pageKey);
    setEditing(null);
    live.clear();
  }

  const selection = useSelection(JSON.stringify(filters));
  const bulk = useBulkRunner();
  const actions = usePlantNotices(live.ownChange);
  const [hidden, setHidden] = useHiddenColumns();
  const [adding, setAdding] = useState(false);
  const [deleting, setDeleting] = useState<Deleting | null>(null);
  const [retagging, setRetagging] = useState(false);

  const rows = live.rows;
  const available = isAdmin ? OPTIONAL_COLUMNS : OPTIONAL_COLUMNS.filter((column) => column !== 'owner' && column !== 'created');
  const isOptional = (column: PlantColumn): column is OptionalColumn => (OPTIONAL_COLUMNS as readonly string[]).includes(column);
  const columns = PLANT_COLUMNS.filter((column) => !isOptional(column) || (available.includes(column) && !hidden.has(column)));
  const pageSelected = rows.filter((row) => selection.isSelected(row.id)).length;
  const selectionView = {
    isSelected: selection.isSelected,
    toggle: selection.toggle,
    page: pageSelected === 0 ? 'none' : pageSelected === rows.length ? 'all' : 'some',
    togglePage: () => selection.setPage(rows, pageSelected !== rows.length),
  } as const;

  const place = {
    shown: data?.rows.length ?? 0,
    offset: data?.offset ?? 0,
    offsetExact: data?.offsetExact ?? true,
    total: data?.total ?? 0,
    totalExact: data?.totalExact ?? true,
  };
  const turnTo = (cursor: Cursor | undefined) => {
    if (!turning) go({ ...query, cursor });
  };

  async function runDelete(target: Deleting) {
    setDeleting(null);
    headingRef.current?.focus();
    // Every delete from the page is kept for undo (the server keeps the plants UNDO_WINDOW_MS).
    const action = { kind: 'delete', keepForUndo: true } as const;
    if (target.kind === 'rows' && target.rows.length <= BULK_MAX) {
      const result = await live.ownWork((changed) => bulk.run([{ action, selection: { kind: 'ids', ids: target.rows.map((row) => row.id) } }], target.rows.length, true, changed));
      actions.deleted(target.rows, result, true);
    } else {
      const [total, exact] = target.kind === 'rows' ? [target.rows.length, true] : [target.count, target.exact];
      const selected = target.kind === 'rows' ? { kind: 'ids' as const, ids: target.rows.map((row) => row.id) } : asBulkSelection(selection.selected);
      const result = await live.ownWork((changed) => bulk.run([{ action, selection: selected }], total, exact, changed));
      actions.deletedMany(result, countText(total, exact), undoDelete);
    }
    selection.clear();
  }

  async function undoDelete(ids: bigint[]) {
    const result = await live.ownWork((changed) => bulk.run([{ action: { kind: 'restore' }, selection: { kind: 'ids', ids } }], ids.length, true, changed));
    actions.restoredMany(result, ids.length);
  }

  async function runRetag(tag: string | null) {
    setRetagging(false);
    const selected = asBulkSelection(selection.selected);
    const result = await live.ownWork((changed) => bulk.run([{ action: { kind: 'retag', tag }, selection: selected }], selection.count, selection.countExact, changed));
    actions.retagged(tag, result, countText(selection.count, selection.countExact), () => undoRetag(tag, result.previous));
    selection.clear();
  }

  /** Writes each plant's earlier tag back, to those still tagged `tag` (a plant re-tagged elsewhere since keeps that). */
  async function undoRetag(tag: string | null, previous: Map<string | null, bigint[]>) {
    const parts = [...previous].map(([before, ids]) => ({ action: { kind: 'retag' as const, tag: before, onlyFrom: tag }, selection: { kind: 'ids' as const, ids } }));
    const total = parts.reduce((sum, part) => sum + part.selection.ids.length, 0);
    const result = await live.ownWork((changed) => bulk.run(parts, total, true, changed));
    actions.retagUndone(result, total);
  }

  function onEditDone(outcome: EditOutcome) {
    const was = editing;
    setEditing(null);
    dirty.current = false;
    if (outcome) actions.renamed(outcome);
    // The cursor goes back to the row it left, once the row is a row again (the table does it after rendering).
    if (was) restoreFocus.current = { row: was.id.toString(), column: was.column };
  }
  const restoreFocus = useRef<{ row: string; column: string } | null>(null);

  /** Takes in what changed elsewhere. The button goes with the news, so the cursor goes to the table it refreshed. */
  function refresh() {
    live.clear();
    void page.refetch();
    const cell = document.querySelector<HTMLElement>('.plants-table [data-grid-target][tabindex="0"]');
    (cell ?? headingRef.current)?.focus();
  }

  const onEdit = (id: bigint, column: PlantFieldName) => {
    if (editing?.id === id) return;
    if (blockedByEdit()) return;
    setEditing({ id, column });
  };

  return (
    <section aria-labelledby="plants-title" className="plants-view">
      <div className="view-head">
        <div className="view-head__title">
          <h1 id="plants-title" ref={headingRef} tabIndex={-1}>
            Plants
          </h1>
          {/* One line, always: the news of changes elsewhere takes the description's place, so nothing moves. */}
          <p className="live-line" data-news={news ? 'yes' : 'no'}>
            {news ? null : <span className="live-line__about">{isAdmin ? 'Every plant, whoever added it.' : 'The plants you added.'}</span>}
            <span className="live-status" data-testid="live" data-state={live.live ? 'on' : 'off'} title="Changes made elsewhere appear here as they happen">
              {live.live ? 'Live' : 'Connecting…'}
            </span>
            {/* Always in the document, so that what appears in it is announced. */}
            <span className="live-news" role="status" data-testid="live-news" title={news || undefined}>
              {news}
            </span>
            {news ? (
              <button type="button" className="link-button live-line__refresh" onClick={refresh}>
                Refresh
              </button>
            ) : null}
          </p>
        </div>
        <div className="view-head__actions">
          <ExportButton query={query} total={data?.totalExact ? data.total : undefined} />
          <ImportButton />
          <ColumnChooser available={available} hidden={hidden} onChange={setHidden} />
          <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
            <Plus className="icon" aria-hidden="true" />
            Add plant
          </button>
        </div>
      </div>

      <div className="card">
        <Toolbar
          query={query}
          isAdmin={isAdmin}
          onChange={(next) => go(next)}
          onMergeTag={
            data && data.total > 0 && !bulk.progress
              ? () => {
                  // Every plant of the view, which all have the tag: "select all matching", then the re-tag.
                  selection.selectAllMatching(filters, data.asOf, data.total, data.totalExact);
                  setRetagging(true);
                }
              : undefined
          }
        />

        {queryFallback(page, 'plants') ??
          (data && data.rows.length === 0 && !walked.stop ? (
            <div className="empty">
              <Leaf className="empty__icon" aria-hidden="true" />
              {hasFilters(query) ? (
                <>
                  <p>No plants match these filters.</p>
                  <button type="button" className="button" onClick={() => go({ size: query.size, sort: query.sort })}>
                    Clear filters
                  </button>
                </>
              ) : (
                <>
                  <p>No plants yet — add the first.</p>
                  <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
                    <Plus className="icon" aria-hidden="true" />
                    Add a plant
                  </button>
                </>
              )}
            </div>
          ) : (
            <>
              {refreshFailure(page, 'list')}
              <PlantsTable
                rows={rows}
                columns={columns}
                sort={query.sort}
                onSort={(sort) => go({ ...query, sort, cursor: undefined })}
                sortKeys={PLANT_SORT_KEYS.filter((key) => key === 'name' || available.includes(key))}
                selection={selectionView}
                editing={editing}
                onEdit={onEdit}
                onEditDone={onEditDone}
                onEditDirty={onEditDirty}
                onSaving={(id) => live.ownChange([id])}
                onDelete={(row) => setDeleting({ kind: 'rows', rows: [row] })}
                marks={live.marks}
                caption={`Plants ${rangeText(place)}, by ${query.sort.key} ${query.sort.dir === 'asc' ? 'ascending' : 'descending'}`}
                busy={page.isFetching}
                restoreFocus={restoreFocus}
              />
              <WalkStatus
                sortKey={query.sort.key}
                stop={walked.stop}
                searching={walked.searching}
                found={rows.length}
                onHalt={walked.halt}
                onResume={walked.resume}
              />
              <Pager
                {...place}
                hasNext={data?.hasNext ?? false}
                loading={turning}
                size={query.size}
                // A page its walk left short goes on from where the walk stopped, not from its last row.
                firstId={walked.stop?.direction === 'backwards' ? walked.stop.id : data?.rows[0]?.id}
                lastId={walked.stop?.direction === 'forwards' ? walked.stop.id : data?.rows[data.rows.length - 1]?.id}
                onSize={(size) => go({ ...query, size, cursor: undefined })}
                onTurn={turnTo}
              />
            </>
          ))}
        <BulkBar
          selected={selection.count}
          matching={selection.selected.kind === 'matching' ? selection.selected.total : null}
          matchingExact={selection.countExact}
          pageAllSelected={rows.length > 0 && pageSelected === rows.length}
          total={place.total}
          totalExact={place.totalExact}
          progress={bulk.progress}
          onStop={bulk.stop}
          onSelectAll={() => data && selection.selectAllMatching(filters, data.asOf, data.total, data.totalExact)}
          onDelete={() =>
            !bulk.progress &&
            setDeleting(selection.selected.kind === 'ids' ? { kind: 'rows', rows: [...selection.selected.rows.values()] } : { kind: 'matching', count: selection.count, exact: selection.countExact })
          }
          onRetag={() => !bulk.progress && setRetagging(true)}
          onClear={() => !bulk.progress && selection.clear()}
        />
      </div>

      {adding ? (
        <AddPlantDialog
          onCancel={() => setAdding(false)}
          onSaving={(id) => live.ownChange([id])}
          onAdded={(plant) => {
            setAdding(false);
            actions.added(plant);
          }}
        />
      ) : null}
      {deleting ? <DeleteDialog deleting={deleting} onConfirm={() => void runDelete(deleting)} onCancel={() => setDeleting(null)} /> : null}
      {retagging ? (
        <RetagDialog
          selected={selection.count}
          selectedExact={selection.countExact}
          mergeFrom={selection.selected.kind === 'matching' && selection.selected.except.size === 0 ? selection.selected.filters.tag : undefined}
          onRetag={(tag) => void runRetag(tag)}
          onCancel={() => setRetagging(false)}
        />
      ) : null}
    </section>
  );
}

export type { PlantRow };
