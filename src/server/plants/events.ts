/**
 * The seam other features hear plants through: a create, delete or restore committed in this process. Its
 * plant.created / plant.deleted event is already in the outbox (written by the database's triggers, in the
 * same transaction); a listener only learns that it may want to look now. Plants know no listener: the
 * composition root (app-router.ts) wires the webhook sender to it.
 */
const listeners = new Set<() => void>();

export function onPlantEventsCommitted(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function plantEventsCommitted(): void {
  for (const listener of listeners) listener();
}
