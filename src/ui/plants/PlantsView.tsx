'use client';

import { keepPreviousData } from '@tanstack/react-query';
import { type ColumnDef, flexRender, getCoreRowModel, type RowSelectionState, useReactTable } from '@tanstack/react-table';
import { ChevronFirst, ChevronLast, ChevronLeft, ChevronRight, Leaf, Plus, Search, Trash2, X } from 'lucide-react';
import { useRouter, useSearchParams } from 'next/navigation';
import { type FormEvent, Suspense, useEffect, useMemo, useRef, useState } from 'react';

import { PAGE_SIZES, type Plant, type PlantRow } from '@/shared/plants';
import { type RouterOutputs, trpc } from '@/ui/trpc';

import { ConfirmDialog } from '../ConfirmDialog';
import { PagerButton } from '../PagerButton';
import { takeHeadingFocus } from '../focus';
import { problemOf } from '../problems';
import { queryFallback, refreshFailure } from '../QueryFallback';
import { useSession } from '../session';
import { UserText } from '../UserText';
import { AddPlantDialog } from './AddPlantDialog';
import { EditRow, RowActions } from './rows';
import { type Cursor, hasFilters, type PageSize, plantsHref, type PlantsQuery, readPlantsQuery, sameCursor } from './url-state';

type Page = RouterOutputs['plants']['page'];
type BulkOutcome = { deleted: number; failed: { plant: PlantRow; message: string }[] };

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const count = new Intl.NumberFormat();

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

  const go = (next: PlantsQuery, how: 'push' | 'replace' = 'push') => router[how](plantsHref(next), { scroll: false });

  const input = {
    size: query.size,
    ...(query.cursor ? { cursor: query.cursor } : {}),
    ...(query.q ? { q: query.q } : {}),
    ...(query.tag ? { tag: query.tag } : {}),
    ...(query.owner && isAdmin ? { owner: query.owner } : {}),
  };
  const page = trpc.plants.page.useQuery(input, { placeholderData: keepPreviousData });
  const data = page.data;
  const turning = page.isPlaceholderData;

  // The server served another page than the address names (that page emptied): the address follows.
  useEffect(() => {
    if (data && !turning && !sameCursor(data.cursor, query.cursor)) go({ ...query, cursor: data.cursor }, 'replace');
    // Only when an answer arrives.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [data, turning]);

  const [adding, setAdding] = useState(false);
  const [status, setStatus] = useState('');
  const [editingId, setEditingId] = useState<bigint | null>(null);
  const [confirming, setConfirming] = useState<PlantRow[] | null>(null);
  const [outcome, setOutcome] = useState<BulkOutcome | null>(null);
  const [rowSelection, setRowSelection] = useState<RowSelectionState>({});
  const [failedIds, setFailedIds] = useState<Set<string>>(new Set());
  const utils = trpc.useUtils();

  // A new page, filter or size starts with nothing selected and nothing being edited.
  const pageKey = plantsHref(query);
  useEffect(() => {
    setRowSelection({});
    setEditingId(null);
  }, [pageKey]);

  const remove = trpc.plants.deleteMany.useMutation({
    onSuccess: (results, { ids }) => {
      const rows = new Map((data?.rows ?? []).map((row) => [row.id, row]));
      const failed = results.flatMap((result) => (result.deleted ? [] : [{ plant: rows.get(result.id) ?? { id: result.id, name: '' }, message: result.message }]));
      const deleted = results.length - failed.length;
      setFailedIds(new Set(failed.map((failure) => failure.plant.id.toString())));
      setOutcome(failed.length > 0 ? { deleted, failed } : null);
      setStatus(
        failed.length > 0
          ? ''
          : ids.length === 1
            ? `Deleted the plant with id ${ids[0]!.toString()}.`
            : `Deleted ${count.format(deleted)} plants.`,
      );
      setRowSelection({});
      headingRef.current?.focus();
    },
    onError: (error) => {
      const problem = problemOf(error);
      if (problem.status !== 401) setOutcome({ deleted: 0, failed: (confirming ?? []).map((plant) => ({ plant, message: problem.message })) });
    },
    onSettled: () => utils.plants.page.invalidate(),
  });

  const columns = useMemo<ColumnDef<PlantRow>[]>(() => {
    const list: ColumnDef<PlantRow>[] = [
      {
        id: 'select',
        meta: { className: 'col-select', cellClassName: 'cell-select' },
        header: ({ table }) => (
          <input
            type="checkbox"
            aria-label="Select every plant on this page"
            checked={table.getIsAllRowsSelected()}
            ref={(element) => {
              if (element) element.indeterminate = table.getIsSomeRowsSelected();
            }}
            onChange={table.getToggleAllRowsSelectedHandler()}
          />
        ),
        cell: ({ row }) => (
          <input
            type="checkbox"
            aria-label={`Select plant ${row.original.name} (id ${row.original.id})`}
            checked={row.getIsSelected()}
            onChange={row.getToggleSelectedHandler()}
          />
        ),
      },
      { id: 'id', header: 'Id', meta: { className: 'col-id', cellClassName: 'id', label: 'Id' }, cell: ({ row }) => row.original.id.toString() },
      {
        id: 'name',
        header: 'Name',
        meta: { className: 'col-name', cellClassName: 'name', label: 'Name' },
        cell: ({ row }) => <UserText clamp>{row.original.name}</UserText>,
      },
      {
        id: 'tag',
        header: 'Tag',
        meta: { className: 'col-tag', cellClassName: 'tag', label: 'Tag' },
        cell: ({ row }) =>
          row.original.tag === undefined ? (
            <span className="muted">—</span>
          ) : (
            <span className="tag-chip">
              <UserText clamp>{row.original.tag}</UserText>
            </span>
          ),
      },
    ];
    if (isAdmin) {
      list.push(
        {
          id: 'owner',
          header: 'Owner',
          meta: { className: 'col-owner', cellClassName: 'owner', label: 'Owner' },
          cell: ({ row }) => <UserText clamp>{row.original.owner ?? ''}</UserText>,
        },
        {
          id: 'created',
          header: 'Created',
          meta: { className: 'col-created', cellClassName: 'created', label: 'Created' },
          cell: ({ row }) => (row.original.createdAt ? <time dateTime={row.original.createdAt.toISOString()}>{dateFormat.format(row.original.createdAt)}</time> : null),
        },
      );
    }
    list.push({
      id: 'actions',
      header: () => <span className="sr-only">Actions</span>,
      meta: { className: 'col-actions', cellClassName: 'cell-actions' },
      cell: ({ row }) => <RowActions plant={row.original} onEdit={() => setEditingId(row.original.id)} onDelete={() => setConfirming([row.original])} />,
    });
    return list;
  }, [isAdmin]);

  // TanStack Table hands out functions whose results change without new identities; the React Compiler
  // therefore leaves this component alone, which is what this line acknowledges.
  // eslint-disable-next-line react-hooks/incompatible-library
  const table = useReactTable({
    data: data?.rows ?? [],
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (row) => row.id.toString(),
    enableRowSelection: true,
    state: { rowSelection },
    onRowSelectionChange: setRowSelection,
  });
  const selected = table.getSelectedRowModel().rows.map((row) => row.original);

  function deleteNow(plants: PlantRow[]) {
    setConfirming(null);
    setOutcome(null);
    setStatus('');
    remove.mutate({ ids: plants.map((plant) => plant.id) });
  }

  const from = data && data.rows.length > 0 ? data.offset + 1 : 0;
  const to = data ? data.offset + data.rows.length : 0;
  const atStart = !data || data.offset === 0;
  const atEnd = !data || to >= data.total;
  const turnTo = (cursor: Cursor | undefined) => {
    if (!turning) go({ ...query, cursor });
  };
  const firstRow = data?.rows[0];
  const lastRow = data?.rows[data.rows.length - 1];

  return (
    <section aria-labelledby="plants-title">
      <div className="view-head">
        <div>
          <h1 id="plants-title" ref={headingRef} tabIndex={-1}>
            Plants
          </h1>
          <p>{isAdmin ? 'Every plant in the store, whoever added it.' : 'The plants you added.'}</p>
        </div>
        <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
          <Plus className="icon" aria-hidden="true" />
          Add plant
        </button>
      </div>

      <p className="sr-only" role="status">
        {status}
      </p>
      {status ? (
        <p className="notice notice--success" aria-hidden="true">
          {status}
        </p>
      ) : null}

      {outcome ? (
        <div className="notice notice--error" role="alert">
          <div className="notice__body">
            <p>
              {outcome.deleted > 0
                ? `${count.format(outcome.deleted)} of ${count.format(outcome.deleted + outcome.failed.length)} plants were deleted. These were not:`
                : outcome.failed.length === 1
                  ? 'This plant was not deleted:'
                  : 'These plants were not deleted:'}
            </p>
            <ul>
              {outcome.failed.map(({ plant, message }) => (
                <li key={plant.id.toString()}>
                  {plant.name ? (
                    <>
                      “<UserText>{plant.name}</UserText>”{' '}
                    </>
                  ) : null}
                  (id {plant.id.toString()}): {message}.
                </li>
              ))}
            </ul>
            <div className="notice__actions">
              <button type="button" className="button button--small" onClick={() => setOutcome(null)}>
                Dismiss
              </button>
            </div>
          </div>
        </div>
      ) : null}

      <div className="card">
        <Toolbar query={query} isAdmin={isAdmin} onChange={go} />

        {selected.length > 0 ? (
          <div className="bulkbar" role="region" aria-label="Selected plants">
            <p>{selected.length === 1 ? '1 plant selected' : `${count.format(selected.length)} plants selected`}</p>
            <button type="button" className="button button--small button--danger-quiet" onClick={() => setConfirming(selected)}>
              <Trash2 className="icon" aria-hidden="true" />
              Delete selected
            </button>
            <button type="button" className="button button--small button--quiet" onClick={() => setRowSelection({})}>
              <X className="icon" aria-hidden="true" />
              Clear selection
            </button>
          </div>
        ) : null}

        {queryFallback(page, 'plants') ??
          (data && data.total === 0 ? (
            <div className="empty">
              <Leaf aria-hidden="true" />
              {hasFilters(query) ? (
                <>
                  <p>No plants match these filters.</p>
                  <button type="button" className="button" onClick={() => go({ size: query.size })}>
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
              <div className="table-wrap">
                <table className="table plants-table" aria-busy={page.isFetching} aria-labelledby="plants-caption">
                  <caption id="plants-caption" className="sr-only">
                    Plants {from}–{to} of {data?.total ?? 0}, by id
                  </caption>
                  <thead>
                    {table.getHeaderGroups().map((group) => (
                      <tr key={group.id}>
                        {group.headers.map((header) => (
                          <th key={header.id} scope="col" className={(header.column.columnDef.meta as ColumnMeta | undefined)?.className}>
                            {flexRender(header.column.columnDef.header, header.getContext())}
                          </th>
                        ))}
                      </tr>
                    ))}
                  </thead>
                  <tbody>
                    {table.getRowModel().rows.map((row) =>
                      row.original.id === editingId ? (
                        <EditRow
                          key={row.id}
                          plant={row.original}
                          columns={table.getVisibleLeafColumns().map((column) => column.id)}
                          onDone={(saved?: Plant) => {
                            setEditingId(null);
                            if (saved) setStatus(`Saved plant “${saved.name}” (id ${saved.id.toString()}).`);
                          }}
                        />
                      ) : (
                        <tr
                          key={row.id}
                          data-plant-id={row.id}
                          aria-selected={row.getIsSelected()}
                          className={failedIds.has(row.id) ? 'row--failed' : undefined}
                        >
                          {row.getVisibleCells().map((cell) => {
                            const meta = cell.column.columnDef.meta as ColumnMeta | undefined;
                            return (
                              <td key={cell.id} className={meta?.cellClassName} data-label={meta?.label}>
                                {flexRender(cell.column.columnDef.cell, cell.getContext())}
                              </td>
                            );
                          })}
                        </tr>
                      ),
                    )}
                  </tbody>
                </table>
              </div>
              <nav className={(data?.rows.length ?? 0) > 25 ? 'pager pager--sticky' : 'pager'} aria-label="Plant pages">
                <p className="pager__range" aria-live="polite" data-testid="plants-range">
                  <strong>
                    {count.format(from)}–{count.format(to)}
                  </strong>{' '}
                  of <strong>{count.format(data?.total ?? 0)}</strong>
                  {turning ? ' (loading…)' : ''}
                </p>
                <div className="pager__buttons">
                  <SizeSelect size={query.size} onChange={(size) => go({ ...query, size, cursor: undefined })} />
                  <PagerButton label="First page" disabled={atStart} onClick={() => turnTo(undefined)} icon={ChevronFirst} />
                  <PagerButton
                    label="Previous page"
                    disabled={atStart || !firstRow}
                    onClick={() => firstRow && turnTo({ kind: 'before', id: firstRow.id })}
                    icon={ChevronLeft}
                  />
                  <PagerButton label="Next page" disabled={atEnd || !lastRow} onClick={() => lastRow && turnTo({ kind: 'after', id: lastRow.id })} icon={ChevronRight} />
                  <PagerButton label="Last page" disabled={atEnd} onClick={() => turnTo({ kind: 'last' })} icon={ChevronLast} />
                </div>
              </nav>
            </>
          ))}
      </div>

      {adding ? (
        <AddPlantDialog
          onCancel={() => setAdding(false)}
          onAdded={(plant) => {
            setAdding(false);
            setOutcome(null);
            setStatus(`Added plant “${plant.name}” with id ${plant.id.toString()}${plant.tag ? `, tag “${plant.tag}”` : ''}.`);
          }}
        />
      ) : null}

      {confirming ? (
        <ConfirmDialog
          title={confirming.length === 1 ? 'Delete this plant?' : `Delete ${count.format(confirming.length)} plants?`}
          confirmLabel={confirming.length === 1 ? 'Delete plant' : `Delete ${count.format(confirming.length)} plants`}
          onConfirm={() => deleteNow(confirming)}
          onCancel={() => setConfirming(null)}
        >
          {confirming.length === 1 ? (
            <p>
              “<UserText>{confirming[0]!.name}</UserText>” (id {confirming[0]!.id.toString()}) will be removed from the store. This cannot be undone.
            </p>
          ) : (
            <>
              <p>These plants will be removed from the store. This cannot be undone.</p>
              <ul>
                {confirming.map((plant) => (
                  <li key={plant.id.toString()}>
                    “<UserText>{plant.name}</UserText>” (id {plant.id.toString()})
                  </li>
                ))}
              </ul>
            </>
          )}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

type ColumnMeta = { className?: string; cellClassName?: string; label?: string };

function SizeSelect({ size, onChange }: { size: PageSize; onChange: (size: PageSize) => void }) {
  return (
    <>
      <label htmlFor="page-size" className="sr-only">
        Plants per page
      </label>
      <select id="page-size" value={size} onChange={(event) => onChange(Number(event.target.value) as PageSize)}>
        {PAGE_SIZES.map((option) => (
          <option key={option} value={option}>
            {option} per page
          </option>
        ))}
      </select>
    </>
  );
}

/**
 * Search and filters. Typing waits for a pause before it changes the address (replacing, so Back is not a
 * list of keystrokes); Enter applies at once; the owner choice applies at once.
 */
function Toolbar({ query, isAdmin, onChange }: { query: PlantsQuery; isAdmin: boolean; onChange: (next: PlantsQuery, how?: 'push' | 'replace') => void }) {
  const [q, setQ] = useState(query.q ?? '');
  const [tag, setTag] = useState(query.tag ?? '');
  const owners = trpc.plants.owners.useQuery(undefined, { enabled: isAdmin, staleTime: 60_000 });

  // Back, Forward or a link changed the address: the inputs show what it says. What this form applied
  // itself is not written back, so text typed since is never overwritten by an older address.
  const [seen, setSeen] = useState({ q: query.q, tag: query.tag });
  const [applied, setApplied] = useState({ q: query.q, tag: query.tag });
  if (seen.q !== query.q || seen.tag !== query.tag) {
    setSeen({ q: query.q, tag: query.tag });
    if (query.q !== applied.q) setQ(query.q ?? '');
    if (query.tag !== applied.tag) setTag(query.tag ?? '');
    setApplied({ q: query.q, tag: query.tag });
  }

  const apply = (how: 'push' | 'replace') => {
    const wantQ = q.trim() === '' ? undefined : q;
    const wantTag = tag === '' ? undefined : tag;
    if (wantQ === query.q && wantTag === query.tag) return;
    setApplied({ q: wantQ, tag: wantTag });
    onChange({ ...query, q: wantQ, tag: wantTag, cursor: undefined }, how);
  };

  // A pause in typing applies the text.
  useEffect(() => {
    const timer = setTimeout(() => apply('replace'), 350);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [q, tag]);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    apply('push');
  }

  return (
    <form className="toolbar" role="search" aria-label="Find plants" onSubmit={onSubmit}>
      <div className="field field--search">
        <label htmlFor="plants-q">Search names</label>
        <div className="search-input">
          <Search className="icon" aria-hidden="true" />
          <input id="plants-q" type="search" value={q} maxLength={200} placeholder="Name contains…" onChange={(event) => setQ(event.target.value)} />
        </div>
      </div>
      <div className="field">
        <label htmlFor="plants-tag">Tag</label>
        <input id="plants-tag" value={tag} maxLength={100} placeholder="Exactly this tag" onChange={(event) => setTag(event.target.value)} />
      </div>
      {isAdmin ? (
        <div className="field">
          <label htmlFor="plants-owner">Owner</label>
          <select
            id="plants-owner"
            value={query.owner ?? ''}
            onChange={(event) => onChange({ ...query, owner: event.target.value || undefined, cursor: undefined })}
          >
            <option value="">Anyone</option>
            {query.owner && !owners.data?.some((owner) => owner.name === query.owner) ? <option value={query.owner}>{query.owner}</option> : null}
            {(owners.data ?? []).map((owner) => (
              <option key={owner.name} value={owner.name}>
                {owner.name}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <button type="submit" className="sr-only" tabIndex={-1}>
        Apply filters
      </button>
      {hasFilters(query) ? (
        <div className="toolbar__actions">
          <button type="button" className="button button--quiet" onClick={() => onChange({ size: query.size })}>
            <X className="icon" aria-hidden="true" />
            Clear filters
          </button>
        </div>
      ) : null}
    </form>
  );
}

export type { Page };
