'use client';

import { useSyncExternalStore } from 'react';

import { OPTIONAL_COLUMNS, type OptionalColumn } from './columns';

/**
 * The columns a person chose to hide, remembered by this browser (localStorage: a preference, nothing
 * secret), the same in every tab.
 */
const KEY = 'plant-store.plants.hidden-columns';
const listeners = new Set<() => void>();
let cached: { raw: string | null; value: ReadonlySet<OptionalColumn> } | undefined;
const NONE: ReadonlySet<OptionalColumn> = new Set();

function read(): ReadonlySet<OptionalColumn> {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(KEY);
  } catch {
    return NONE;
  }
  if (cached && cached.raw === raw) return cached.value;
  let value: ReadonlySet<OptionalColumn> = NONE;
  try {
    const parsed: unknown = raw === null ? [] : JSON.parse(raw);
    if (Array.isArray(parsed)) value = new Set(parsed.filter((item): item is OptionalColumn => (OPTIONAL_COLUMNS as readonly unknown[]).includes(item)));
  } catch {
    // Unreadable: every column shows.
  }
  cached = { raw, value };
  return value;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === KEY) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

export function useHiddenColumns(): [ReadonlySet<OptionalColumn>, (column: OptionalColumn, hidden: boolean) => void] {
  const hidden = useSyncExternalStore(subscribe, read, () => NONE);
  const setHidden = (column: OptionalColumn, hide: boolean) => {
    const next = new Set(read());
    if (hide) next.add(column);
    else next.delete(column);
    try {
      window.localStorage.setItem(KEY, JSON.stringify([...next]));
    } catch {
          // Storage switched off: the choice is not kept.
    }
    for (const listener of listeners) listener();
  };
  return [hidden, setHidden];
}
