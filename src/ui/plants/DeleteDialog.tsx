'use client';

import type { PlantRow } from '@/shared/plant-table';

import { ConfirmDialog } from '../ConfirmDialog';
import { UserText } from '../UserText';

const count = new Intl.NumberFormat();

/** A "select all" of a view whose count stopped at the cap deletes at least `count` ("10,000+"). */
export type Deleting = { kind: 'rows'; rows: PlantRow[] } | { kind: 'matching'; count: number; exact: boolean };

/** Asks before a delete: one plant by name, a few listed, or every matching plant, with how many exactly where it is known. */
export function DeleteDialog({ deleting, onConfirm, onCancel }: { deleting: Deleting; onConfirm: () => void; onCancel: () => void }) {
  const total = deleting.kind === 'rows' ? deleting.rows.length : deleting.count;
  const exact = deleting.kind === 'rows' || deleting.exact;
  const many = exact ? count.format(total) : `at least ${count.format(total)}`;
  const title = total === 1 && exact ? 'Delete this plant?' : `Delete ${many} plants?`;
  const label = total === 1 && exact ? 'Delete plant' : `Delete ${many} plants`;
  return (
    <ConfirmDialog title={title} confirmLabel={label} onConfirm={onConfirm} onCancel={onCancel}>
      {deleting.kind === 'matching' ? (
        <p>
          Every plant that matched the filters when you selected them, except the ones you unticked, is removed from the store. You can stop it while it runs, and undo it
          for a few minutes.
        </p>
      ) : deleting.rows.length === 1 ? (
        <p>
          “<UserText>{deleting.rows[0]!.name}</UserText>” (id {deleting.rows[0]!.id.toString()}) will be removed from the store. You can undo it for a few minutes.
        </p>
      ) : (
        <>
          <p>These plants will be removed from the store. You can undo it for a few minutes.</p>
          <ul>
            {deleting.rows.slice(0, 100).map((plant) => (
              <li key={plant.id.toString()}>
                “<UserText>{plant.name}</UserText>” (id {plant.id.toString()})
              </li>
            ))}
            {deleting.rows.length > 100 ? <li>and {count.format(deleting.rows.length - 100)} more</li> : null}
          </ul>
        </>
      )}
    </ConfirmDialog>
  );
}
