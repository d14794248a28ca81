/**
 * The seam other features hear plants through: a change of plants committed in this process (a create,
 * rename or re-tag, delete or restore; one row or many). A listener only learns that it may want to look
 * now: what changed is already in the database, written by its triggers in the same transaction (the live
 * feed's PlantChange log; for creates, deletes and restores the webhook outbox's plant.created /
 * plant.deleted events). Plants know no listener: the composition root (app-router.ts) wires the webhook
 * sender to it, and the live feed's reader (live/feed.ts) listens while it runs. Changes made by other
 * processes or instances are not heard here; those readers' polls find them.
 */
export type PlantsCommit = {
  /** The commit wrote webhook events (creates, deletes, restores): a rename or re-tag writes none. */
  readonly outboxEvents: boolean;
};

const listeners = new Set<(commit: PlantsCommit) => void>();

export function onPlantsCommitted(listener: (commit: PlantsCommit) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function plantsCommitted(commit: PlantsCommit): void {
  for (const listener of listeners) listener(commit);
}
