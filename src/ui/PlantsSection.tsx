'use client';

import { keepPreviousData, type QueryKey, useQueryClient } from '@tanstack/react-query';
import { getQueryKey } from '@trpc/react-query';
import { useId, useRef, useState } from 'react';

import { type RouterOutputs, trpc } from '@/ui/trpc';

import { ConfirmDialog } from './ConfirmDialog';
import { CreatePlantForm } from './CreatePlantForm';
import { problemOf } from './problems';
import { queryFallback } from './QueryFallback';

type Plant = RouterOutputs['plants']['list'][number];

export const PAGE_SIZES = [10, 25, 50, 100] as const;
const DEFAULT_PAGE_SIZE = 10;

type DeleteFailure = { plant: Plant; message: string };

/** Puts a plant back into a page, in id order, unless it is there already. */
function withPlant(page: Plant[] | undefined, plant: Plant): Plant[] | undefined {
  if (!page || page.some((row) => row.id === plant.id)) return page;
  return [...page, plant].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function PlantsSection({ canSeeAll }: { canSeeAll: boolean }) {
  const utils = trpc.useUtils();
  const queryClient = useQueryClient();
  const listKey = getQueryKey(trpc.plants.list);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const idInputRef = useRef<HTMLInputElement>(null);
  const sizeId = useId();

  const [pageSize, setPageSize] = useState<number>(DEFAULT_PAGE_SIZE);
  /** The `after` cursor of each page visited so far; the last one is the page on screen. */
  const [cursors, setCursors] = useState<(bigint | undefined)[]>([undefined]);
  const after = cursors[cursors.length - 1];
  const pageNumber = cursors.length;

  // One row more than shown tells whether another page follows; the procedure returns a plain array.
  const list = trpc.plants.list.useQuery(
    after === undefined ? { limit: pageSize + 1 } : { limit: pageSize + 1, after },
    { placeholderData: keepPreviousData },
  );
  const rows = list.data?.slice(0, pageSize) ?? [];
  const hasNext = (list.data?.length ?? 0) > pageSize;
  const turning = list.isPlaceholderData;

  const [confirming, setConfirming] = useState<Plant | null>(null);
  const [deleteFailure, setDeleteFailure] = useState<DeleteFailure | null>(null);
  const [announcement, setAnnouncement] = useState('');

  const remove = trpc.plants.delete.useMutation({
    onMutate: async (input) => {
      // The schema also takes decimal text (for the REST path); BigInt reads either form exactly.
      const id = BigInt(input.id);
      await utils.plants.list.cancel();
      let plant: Plant | undefined;
      const pages: QueryKey[] = [];
      for (const [key, page] of queryClient.getQueriesData<Plant[]>({ queryKey: listKey })) {
        const gone = page?.find((row) => row.id === id);
        if (!gone) continue;
        plant = gone;
        pages.push(key);
        queryClient.setQueryData<Plant[]>(key, page?.filter((row) => row.id !== id));
      }
      return { plant, pages };
    },
    onError: (error, input, context) => {
      const problem = problemOf(error);
      const plant = context?.plant ?? { id: BigInt(input.id), name: '' };
      // The row comes back where it was, and says why. It is not reloaded at once: whoever removed it
      // elsewhere, the person here first reads what happened, then reloads the list.
      for (const key of context?.pages ?? []) queryClient.setQueryData<Plant[]>(key, (page) => withPlant(page, plant));
      if (problem.status !== 401) {
        setDeleteFailure({ plant, message: problem.message });
        setAnnouncement('');
      }
    },
    onSuccess: (_, input) => {
      setAnnouncement(`Deleted the plant with id ${String(input.id)}.`);
    },
    onSettled: (_data, error) => {
      if (!error) void utils.plants.list.invalidate();
    },
  });

  function confirmDelete() {
    const plant = confirming;
    if (!plant) return;
    setConfirming(null);
    setDeleteFailure(null);
    // Focus moves on before the row leaves: to the next row's Delete, else the previous one's, else the
    // section heading, so a keyboard user goes on from where they were.
    const index = rows.findIndex((row) => row.id === plant.id);
    const neighbour = rows[index + 1] ?? rows[index - 1];
    (neighbour ? document.getElementById(deleteButtonId(neighbour.id)) : headingRef.current)?.focus();
    remove.mutate({ id: plant.id });
  }

  function goTo(next: (bigint | undefined)[]) {
    setDeleteFailure(null);
    setCursors(next);
  }

  const lastRow = rows[rows.length - 1];
  const firstShown = (pageNumber - 1) * pageSize + 1;

  return (
    <section className="plants" aria-labelledby="plants-title">
      <div className="section-head">
        <h2 id="plants-title" ref={headingRef} tabIndex={-1}>
          Plants
        </h2>
        <p className="muted">{canSeeAll ? 'As an admin you see every plant in the store.' : 'You see the plants you added.'}</p>
      </div>

      <CreatePlantForm idInputRef={idInputRef} />

      <div className="card">
        <div className="table-toolbar">
          <div className="inline-field">
            <label htmlFor={sizeId}>Plants per page</label>
            <select
              id={sizeId}
              value={pageSize}
              onChange={(event) => {
                setPageSize(Number(event.target.value));
                goTo([undefined]);
              }}
            >
              {PAGE_SIZES.map((size) => (
                <option key={size} value={size}>
                  {size}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="button button--quiet" onClick={() => void list.refetch()}>
            Reload
          </button>
        </div>

        <p className="sr-only" role="status">
          {announcement}
        </p>
        {deleteFailure ? (
          <div className="notice notice--error" role="alert">
            <p>
              The plant{deleteFailure.plant.name ? ` “${deleteFailure.plant.name}”` : ''} with id {deleteFailure.plant.id.toString()} was not
              deleted: {deleteFailure.message}. It may have been removed in another session.
            </p>
            <div className="notice__actions">
              <button
                type="button"
                className="button"
                onClick={() => {
                  setDeleteFailure(null);
                  void utils.plants.list.invalidate();
                }}
              >
                Reload the list
              </button>
              <button type="button" className="button button--quiet" onClick={() => setDeleteFailure(null)}>
                Dismiss
              </button>
            </div>
          </div>
        ) : null}

        {queryFallback(list, 'plants') ??
          (rows.length === 0 && pageNumber === 1 ? (
            <div className="empty">
              <p>No plants yet — add the first.</p>
              <button type="button" className="button" onClick={() => idInputRef.current?.focus()}>
                Add a plant
              </button>
            </div>
          ) : (
            <>
              {list.isError ? (
                <p className="notice notice--error" role="alert">
                  The list could not be refreshed: {problemOf(list.error).message}.
                </p>
              ) : null}
              <div className="table-wrap" role="region" aria-labelledby="plants-caption" tabIndex={0}>
                <table className="table" aria-busy={list.isFetching}>
                  <caption id="plants-caption">
                    {rows.length === 0
                      ? `Page ${pageNumber}: no plants here`
                      : rows.length === 1
                        ? `Page ${pageNumber}: plant ${firstShown}, by id`
                        : `Page ${pageNumber}: plants ${firstShown}–${firstShown + rows.length - 1}, by id`}
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col" className="num">
                        Id
                      </th>
                      <th scope="col">Name</th>
                      <th scope="col">Tag</th>
                      <th scope="col" className="actions">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((plant) => {
                      const failed = deleteFailure?.plant.id === plant.id;
                      return (
                        <tr key={plant.id.toString()} className={failed ? 'row--failed' : undefined} data-plant-id={plant.id.toString()}>
                          <td className="num id">{plant.id.toString()}</td>
                          <td className="name">{plant.name}</td>
                          <td className="tag">{plant.tag ?? <span className="muted">—</span>}</td>
                          <td className="actions">
                            <button
                              type="button"
                              id={deleteButtonId(plant.id)}
                              className="button button--small button--danger-quiet"
                              aria-label={`Delete plant ${plant.name} (id ${plant.id.toString()})`}
                              onClick={() => setConfirming(plant)}
                            >
                              Delete
                            </button>
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </>
          ))}

        {!list.isPending && (pageNumber > 1 || hasNext) ? (
          <nav className="pager" aria-label="Plant pages">
            <button
              type="button"
              className="button"
              aria-disabled={pageNumber === 1 || turning}
              onClick={() => {
                if (pageNumber > 1 && !turning) goTo(cursors.slice(0, -1));
              }}
            >
              ← Previous
            </button>
            <span className="pager__page" aria-live="polite">
              Page {pageNumber}
              {turning ? ' (loading…)' : ''}
            </span>
            <button
              type="button"
              className="button"
              aria-disabled={!hasNext || turning || !lastRow}
              onClick={() => {
                if (hasNext && !turning && lastRow) goTo([...cursors, lastRow.id]);
              }}
            >
              Next →
            </button>
          </nav>
        ) : null}
      </div>

      {confirming ? (
        <ConfirmDialog title="Delete this plant?" confirmLabel="Delete plant" onConfirm={confirmDelete} onCancel={() => setConfirming(null)}>
          <p>
            “{confirming.name}” (id {confirming.id.toString()}) will be removed from the store. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

function deleteButtonId(id: bigint): string {
  return `delete-plant-${id.toString()}`;
}
