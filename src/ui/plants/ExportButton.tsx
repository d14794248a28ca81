'use client';

import { Download } from 'lucide-react';
import { useState } from 'react';

import { useNotices } from '../notices';
import { tokenStore } from '../session-store';
import type { PlantsQuery } from './url-state';

/** The REST export's address for the view: its filters and sort (the export takes every matching plant, not a page). */
export function exportHref(query: PlantsQuery): string {
  const params = new URLSearchParams();
  if (query.q) params.set('q', query.q);
  if (query.tag) params.set('tag', query.tag);
  if (query.owner) params.set('owner', query.owner);
  if (query.sort.key !== 'id') params.set('sort', query.sort.key);
  if (query.sort.dir !== 'asc') params.set('dir', query.sort.dir);
  const search = params.toString();
  return `/api/plants/export${search ? `?${search}` : ''}`;
}

/**
 * CSV of the current view (GET /api/plants/export, streamed by the server). The token travels in the
 * Authorization header as on every call, so the file is fetched here and handed to the browser's download
 * from memory; the link never carries the token.
 */
export function ExportButton({ query, total }: { query: PlantsQuery; total: number | undefined }) {
  const notices = useNotices();
  const [busy, setBusy] = useState(false);
  async function run() {
    if (busy) return;
    setBusy(true);
    try {
      const token = tokenStore.token();
      const response = await fetch(exportHref(query), { headers: token ? { authorization: `Bearer ${token}` } : {} });
      if (!response.ok) {
        const problem = (await response.json().catch(() => null)) as { message?: string } | null;
        notices.show({ kind: 'error', content: `The export failed: ${problem?.message ?? `the server answered ${response.status}`}.` });
        return;
      }
      const blob = await response.blob();
      const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? 'plants.csv';
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = name;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      notices.show({ kind: 'success', content: `Exported ${total === undefined ? 'the plants' : `${new Intl.NumberFormat().format(total)} plants`} to ${name}.` });
    } catch (error) {
      notices.show({ kind: 'error', content: `The export failed: ${error instanceof Error ? error.message : 'the server could not be reached'}.` });
    } finally {
      setBusy(false);
    }
  }
  return (
    <button type="button" className="button" onClick={() => void run()} aria-disabled={busy || undefined} title="Every plant of this view, as a CSV file">
      {busy ? <span className="spinner" aria-hidden="true" /> : <Download className="icon" aria-hidden="true" />}
      <span className="collapse-label">{busy ? 'Exporting…' : 'Export CSV'}</span>
      <span className="sr-only">{busy ? '' : ' of every plant in this view'}</span>
    </button>
  );
}
