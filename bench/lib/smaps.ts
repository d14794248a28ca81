/** Where a process's resident memory is, by mapping, from /proc/PID/smaps (Linux). */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { projectRoot } from './paths';

export type SmapsSummary = { rows: { what: string; rssBytes: number }[]; totalRss: number };

/**
 * /proc/PID/smaps by mapping: node's own binary, native add-ons (better-sqlite3), other shared libraries,
 * malloc's heap, and anonymous memory (V8's heap spaces, Wasm memories, malloc arenas, thread stacks).
 */
export function summariseSmaps(pid: number): SmapsSummary | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const totals = new Map<string, number>();
  let current = '';
  for (const line of text.split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+(?=\s|$)/.exec(line);
    if (header) {
      const name = line.slice(header[0].length).trim();
      if (!name && header[1]!.includes('x')) current = 'anonymous, executable (JIT code, Wasm code)';
      else if (!name) current = 'anonymous data (V8 heap spaces, Wasm memory, malloc arenas, stacks)';
      else if (name === '[heap]') current = '[heap] (malloc: native objects, SQLite page cache)';
      else if (name.startsWith('[')) current = `${name} (kernel)`;
      else if (name === process.execPath || /\/node$/.test(name)) current = 'node binary (code, read-only data)';
      else if (name.endsWith('.node')) current = `native add-on ${path.basename(name)}`;
      else if (/\.so(\.|$)/.test(name)) current = 'shared libraries (libc, libstdc++ …)';
      else current = `file ${name.replace(projectRoot, '.')}`;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) totals.set(current, (totals.get(current) ?? 0) + Number(rss[1]) * 1024);
  }
  const rows = [...totals].map(([what, rssBytes]) => ({ what, rssBytes })).sort((a, b) => b.rssBytes - a.rssBytes);
  return { rows, totalRss: rows.reduce((total, row) => total + row.rssBytes, 0) };
}
