'use client';

import { Search, X } from 'lucide-react';
import { type FormEvent, useState } from 'react';

import { trpc } from '@/ui/trpc';

import { TagFilter } from './TagFilter';
import { hasFilters, type PlantsQuery } from './url-state';

/**
 * Search and filters. Each applies one way, at once, when the person says so: the search on Enter (or its
 * button), a tag or an owner when chosen. Nothing applies on a timer, so nothing done after typing can be
 * undone by a delayed apply (the old 350 ms pause did exactly that).
 */
export function Toolbar({ query, isAdmin, onChange, onMergeTag }: { query: PlantsQuery; isAdmin: boolean; onChange: (next: PlantsQuery) => void; onMergeTag?: () => void }) {
  const [q, setQ] = useState(query.q ?? '');
  const [seen, setSeen] = useState(query.q);
  // Back, Forward, a link or Clear filters changed the search: the field shows it.
  if (seen !== query.q) {
    setSeen(query.q);
    setQ(query.q ?? '');
  }
  const owners = trpc.plants.owners.useQuery(undefined, { enabled: isAdmin, staleTime: 60_000 });
  const reset = { ...query, cursor: undefined };

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const wanted = q.trim() === '' ? undefined : q;
    if (wanted !== query.q) onChange({ ...reset, q: wanted });
  }

  return (
    <div className="toolbar" role="search" aria-label="Find plants">
      <form className="field field--search" onSubmit={onSubmit}>
        <label htmlFor="plants-q">Search names</label>
        <div className="search-input">
          <input
            id="plants-q"
            type="search"
            value={q}
            maxLength={200}
            placeholder="Name contains…"
            enterKeyHint="search"
            aria-describedby="plants-q-hint"
            onChange={(event) => {
              setQ(event.target.value);
              // The field's own clear button (×) empties it: that is a choice too.
              if (event.target.value === '' && query.q !== undefined) onChange({ ...reset, q: undefined });
            }}
          />
          <button type="submit" className="button icon-button search-input__go" aria-label="Search" title="Search (Enter)">
            <Search className="icon" aria-hidden="true" />
          </button>
        </div>
        <span id="plants-q-hint" className="sr-only">
          Press Enter to search.
        </span>
      </form>
      <TagFilter value={query.tag} owner={isAdmin ? query.owner : undefined} onChoose={(tag) => onChange({ ...reset, tag })} onMerge={onMergeTag} />
      {isAdmin ? (
        <div className="field">
          <label htmlFor="plants-owner">Owner</label>
          <select id="plants-owner" value={query.owner ?? ''} onChange={(event) => onChange({ ...reset, owner: event.target.value || undefined })}>
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
      {hasFilters(query) ? (
        <div className="toolbar__actions">
          <button type="button" className="button button--quiet" onClick={() => onChange({ size: query.size, sort: query.sort })}>
            <X className="icon" aria-hidden="true" />
            Clear filters
          </button>
        </div>
      ) : null}
    </div>
  );
}
