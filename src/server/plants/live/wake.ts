/**
 * A change to plants committed in this process: the live feed of this process looks at once instead of at
 * its next poll (changes made by other processes or instances arrive with that poll).
 */
const listeners = new Set<() => void>();

export function onPlantsChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function plantsChanged(): void {
  for (const listener of listeners) listener();
}
