'use client';

import type { Plant } from '@/shared/plants';
import type { PlantRow } from '@/shared/plant-table';
import { trpc } from '@/ui/trpc';

import { useNotices } from '../notices';
import { problemOf } from '../problems';
import { UserText } from '../UserText';
import type { EditOutcome } from './EditRow';
import { patchBackTo } from './fields';
import type { BulkResult } from './useBulk';

const count = new Intl.NumberFormat();

/** “Fern” (id 7): the name isolated, so its own direction marks cannot turn the sentence around. */
function Named({ plant }: { plant: Pick<Plant, 'id' | 'name'> }) {
  return (
    <>
      “<UserText>{plant.name}</UserText>” (id {plant.id.toString()})
    </>
  );
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : `${count.format(n)} ${many}`);

/**
 * What the plants view says after each action, with Undo where it can be undone: a delete (the server
 * keeps the deleted plants a few minutes for it; an undone delete is a new plant to webhooks) and a rename
 * (the old name and tag written back).
 */
export function usePlantNotices(ownChange: (ids: Iterable<bigint>) => void) {
  const notices = useNotices();
  const utils = trpc.useUtils();

  const failed = (what: string, error: unknown) => {
    const problem = problemOf(error);
    if (problem.status !== 401) notices.show({ kind: 'error', content: `${what}: ${problem.message}.` });
  };

  async function restore(rows: PlantRow[], ids: bigint[]) {
    try {
      ownChange(ids);
      const outcome = await utils.client.plants.restore.mutate({ ids });
      await utils.plants.page.invalidate();
      const lost = outcome.taken.length + outcome.missing.length;
      const one = rows.find((row) => row.id === ids[0]);
      notices.show({
        kind: lost > 0 ? 'warning' : 'success',
        content:
          ids.length === 1 && one && lost === 0 ? (
            <>
              Put back plant <Named plant={one} />.
            </>
          ) : (
            `Put back ${plural(outcome.restored.length, '1 plant', 'plants')}${outcome.taken.length ? `; ${plural(outcome.taken.length, '1 id was', 'ids were')} taken meanwhile` : ''}${outcome.missing.length ? `; ${plural(outcome.missing.length, '1 was', 'were')} too old to undo` : ''}.`
          ),
      });
    } catch (error) {
      failed('The delete was not undone', error);
    }
  }

  return {
    added(plant: Plant) {
      notices.show({
        kind: 'success',
        content: (
          <>
            Added plant <Named plant={plant} />
            {plant.tag ? (
              <>
                , tag “<UserText>{plant.tag}</UserText>”
              </>
            ) : null}
            .
          </>
        ),
      });
    },

    renamed({ saved, before, changed }: Exclude<EditOutcome, null>) {
      notices.show({
        kind: 'success',
        content: (
          <>
            Saved plant <Named plant={saved} />.
          </>
        ),
        action: {
          label: 'Undo',
          shortcut: 'undo',
          run: async () => {
            try {
              ownChange([saved.id]);
              await utils.client.plants.update.mutate({ id: saved.id, ...patchBackTo(before, changed) });
              await utils.plants.page.invalidate();
              notices.show({
                kind: 'info',
                content: (
                  <>
                    Undone: plant {saved.id.toString()} is “<UserText>{before.name}</UserText>” again.
                  </>
                ),
              });
            } catch (error) {
              failed('The change was not undone', error);
            }
          },
        },
      });
    },

    deleted(rows: PlantRow[], result: BulkResult, undoable: boolean) {
      if (result.failed) {
        failed(`${plural(result.doneCount, 'One plant was', 'plants were')} deleted, then the rest failed`, new Error(result.failed));
        return;
      }
      const gone = result.gone > 0 ? ` (${plural(result.gone, '1 was', 'were')} deleted elsewhere already)` : '';
      const only = rows.length === 1 ? rows[0]! : null;
      notices.show({
        kind: 'success',
        content: only ? (
          <>
            Deleted plant <Named plant={only} />
            {gone}.
          </>
        ) : (
          `Deleted ${plural(rows.length, '1 plant', 'plants')}${gone}.`
        ),
        ...(undoable && result.doneIds.length > 0 ? { action: { label: 'Undo', shortcut: 'undo' as const, run: () => restore(rows, result.doneIds) } } : {}),
      });
    },

    /**
     * A delete of more than one call's plants ("select all", or more than BULK_MAX ticked): how many, whether it was
     * stopped, and Undo of what it deleted, worked through like the delete (progress, Stop).
     */
    deletedMany(result: BulkResult, of: string, undo: (ids: bigint[]) => Promise<void>) {
      if (result.failed) failed(`${plural(result.doneCount, '1 plant was', 'plants were')} deleted, then it stopped`, new Error(result.failed));
      const gone = result.gone ? ` (${plural(result.gone, '1 was', 'were')} deleted elsewhere already)` : '';
      const undoable = result.doneIds.length > 0 ? { action: { label: 'Undo', shortcut: 'undo' as const, run: () => undo(result.doneIds) } } : {};
      if (result.failed) {
        if (result.doneIds.length > 0) notices.show({ kind: 'warning', content: `Deleted ${plural(result.doneCount, '1 plant', 'plants')} before it failed.`, ...undoable });
        return;
      }
      notices.show({
        kind: result.stopped ? 'warning' : 'success',
        content: result.stopped
          ? `Stopped: deleted ${count.format(result.doneCount + result.gone)} of ${of} plants${gone}. The rest are kept.`
          : `Deleted ${plural(result.doneCount + result.gone, '1 plant', 'plants')}${gone}.`,
        ...undoable,
      });
    },

    /** The undo of deletedMany. */
    restoredMany(result: BulkResult, of: number) {
      if (result.failed) return failed(`${plural(result.doneCount, '1 plant was', 'plants were')} put back, then it stopped`, new Error(result.failed));
      const lost = result.gone ? `; ${plural(result.gone, '1 could', 'could')} not be put back (its id taken meanwhile, or too old to undo)` : '';
      notices.show({
        kind: result.stopped || result.gone ? 'warning' : 'success',
        content: result.stopped ? `Stopped: put back ${count.format(result.doneCount)} of ${count.format(of)} plants${lost}.` : `Put back ${plural(result.doneCount, '1 plant', 'plants')}${lost}.`,
      });
    },

    /** The undo of a re-tag. */
    retagUndone(result: BulkResult, of: number) {
      if (result.failed) return failed(`${plural(result.doneCount, '1 plant has', 'plants have')} its tag back, then it stopped`, new Error(result.failed));
      const kept = result.gone ? ` (${plural(result.gone, '1 was', 'were')} changed or deleted elsewhere meanwhile, and kept that)` : '';
      notices.show({
        kind: result.stopped || result.gone ? 'warning' : 'info',
        content: result.stopped
          ? `Stopped: ${count.format(result.doneCount)} of ${count.format(of)} plants have their tags back${kept}.`
          : `Undone: ${plural(result.doneCount, '1 plant has its tag', 'plants have their tags')} back${kept}.`,
      });
    },

    retagged(tag: string | null, result: BulkResult, of: string, undo: () => Promise<void>) {
      const undoable = result.doneIds.length > 0 ? { action: { label: 'Undo', shortcut: 'undo' as const, run: undo } } : {};
      if (result.failed) {
        failed(`${plural(result.doneCount, '1 plant was', 'plants were')} re-tagged, then it stopped`, new Error(result.failed));
        if (result.doneIds.length > 0) notices.show({ kind: 'warning', content: `Re-tagged ${plural(result.doneCount, '1 plant', 'plants')} before it failed.`, ...undoable });
        return;
      }
      notices.show({
        kind: result.stopped ? 'warning' : 'success',
        content: (
          <>
            {result.stopped ? `Stopped: ` : null}
            {tag === null ? 'Removed the tag of' : 'Tagged'} {result.stopped ? `${count.format(result.doneCount)} of ${of} plants` : plural(result.doneCount, '1 plant', 'plants')}
            {tag === null ? null : (
              <>
                {' '}
                “<UserText>{tag}</UserText>”
              </>
            )}
            {result.gone ? ` (${plural(result.gone, '1 was', 'were')} deleted elsewhere meanwhile)` : ''}.
          </>
        ),
        ...undoable,
      });
    },
  };
}
