/**
 * Where a server's memory goes: a V8 heap snapshot summarised by source package, and /proc/PID/smaps
 * summarised by mapping.
 *
 * Heap by package: the snapshot's retained sizes (dominator tree, as Chrome DevTools computes them: weak
 * edges ignored, shortcut edges only from the root) are split among packages. A function belongs to where
 * its code is (its location in the bundle, mapped through the bundle's source map to `node_modules/<pkg>`
 * or `src/…`); a closure scope (Context) to the package of the functions that close over it; a variable of
 * a scope that several packages share (the bundle's top level, where esbuild hoists every ES module) to
 * where the variable is declared. Every other object belongs to its immediate dominator's package: what
 * keeps it alive. So a package's figure is what would go if the package's own code and scopes went
 * (exclusive: a package inside it counts for itself). A script's source text counts for the script.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { projectRoot } from './paths';

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]]; location_fields?: string[] } };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations?: number[];
};

export type HeapSummary = {
  totalBytes: number;
  nodeCount: number;
  /** Retained (exclusive) bytes by package, largest first. */
  byPackage: { place: string; bytes: number; objects: number; codeBytes: number }[];
  /** Self bytes by V8 node type (string, code, closure, object, array, native …). */
  byType: { type: string; bytes: number; objects: number }[];
  /** What the "(V8 and Node internals, roots)" share is made of: self bytes by type and name. */
  internalsByName: { what: string; bytes: number; objects: number }[];
  /** The largest retained objects. */
  largest: { name: string; type: string; place: string; retainedBytes: number; selfBytes: number }[];
};

/** `pkg:<name>` for node_modules, the first two folders under src/, `node:<module>` for Node's own code. */
export function placeOfFile(file: string): string {
  if (file.startsWith('node:')) return `node:${file.slice(5).split('/').slice(0, file.startsWith('node:internal/') ? 2 : 1).join('/')}`;
  const modules = file.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = file.slice(modules + '/node_modules/'.length).split('/');
    return `pkg:${parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  const relative = path.relative(projectRoot, file);
  if (!relative.startsWith('..')) {
    const parts = relative.split(path.sep);
    if (parts[0] === 'src') return parts.length > 3 ? parts.slice(0, 3).join('/') : parts.slice(0, -1).join('/') || relative;
    return relative;
  }
  return file;
}

/** Maps (script, line, column) of the bundle's code to a place, through `<script>.map`. */
export class Places {
  private maps = new Map<string, SourceMap | null>();
  private declarations = new Map<string, Map<string, string>>();

  private fileOf(url: string): string | null {
    if (url.startsWith('file://')) {
      try {
        return fileURLToPath(url);
      } catch {
        return null;
      }
    }
    return url.startsWith('/') ? url : null;
  }

  private mapOf(file: string): SourceMap | null {
    if (!this.maps.has(file)) {
      const mapFile = `${file}.map`;
      this.maps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8'))) : null);
    }
    return this.maps.get(file)!;
  }

  at(url: string, line: number, column: number): string {
    return this.locate(url, line, column).place;
  }

  /** The place, and the original file and line (1-based) where the source map knows them. */
  locate(url: string, line: number, column: number): { place: string; file: string | null; line: number } {
    if (!url) return { place: '(code made by eval or new Function)', file: null, line: line + 1 };
    if (url.startsWith('node:')) return { place: placeOfFile(url), file: url, line: line + 1 };
    const file = this.fileOf(url);
    if (!file) return { place: url.startsWith('wasm') ? 'wasm' : url, file: null, line: line + 1 };
    const map = this.mapOf(file);
    if (!map) return { place: placeOfFile(file), file, line: line + 1 };
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (!entry.originalSource) return { place: `${placeOfFile(file)} (unmapped)`, file, line: line + 1 };
    const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(file), entry.originalSource);
    return { place: placeOfFile(source), file: source, line: (entry.originalLine ?? line) + 1 };
  }

  /** Where a top-level `var|let|const|function|class NAME` of this script is declared (esbuild writes them unindented). */
  declaration(url: string, name: string): string | undefined {
    let names = this.declarations.get(url);
    if (!names) {
      names = new Map();
      this.declarations.set(url, names);
      const file = this.fileOf(url);
      if (file && existsSync(file)) {
        const lines = readFileSync(file, 'utf8').split('\n');
        const pattern = /^(?:export )?(?:var|let|const|async function\*?|function\*?|class) ([A-Za-z_$][\w$]*)/;
        lines.forEach((text, line) => {
          const match = pattern.exec(text);
          if (match) names!.set(match[1]!, this.at(url, line, text.indexOf(match[1]!, match[0].length - match[1]!.length)));
          // `var a = …, b = …` on one line: the rest of the names on it, declared at the same place.
          if (match && text.startsWith('var ')) for (const more of text.matchAll(/, ([A-Za-z_$][\w$]*) =/g)) names!.set(more[1]!, names!.get(match[1]!)!);
          // `var { a, b: c } = …`: each name bound, declared where the line is.
          const destructured = /^(?:export )?(?:var|let|const) \{([^}]*)\}/.exec(text);
          if (destructured) {
            const place = this.at(url, line, 0);
            for (const part of destructured[1]!.split(',')) {
              const bound = /(?<![\w$])([A-Za-z_$][\w$]*)$/.exec(part.split('=')[0]!.trim());
              if (bound) names!.set(bound[1]!, place);
            }
          }
        });
      }
    }
    return names.get(name);
  }
}

const LARGE_STRING = 256 * 1024;

export function summariseHeapSnapshot(file: string, top = 25): HeapSummary {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const meta = snapshot.snapshot.meta;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const TYPE = meta.node_fields.indexOf('type');
  const NAME = meta.node_fields.indexOf('name');
  const SELF = meta.node_fields.indexOf('self_size');
  const EDGE_COUNT = meta.node_fields.indexOf('edge_count');
  const EDGE_TYPE = meta.edge_fields.indexOf('type');
  const EDGE_NAME = meta.edge_fields.indexOf('name_or_index');
  const TO = meta.edge_fields.indexOf('to_node');
  const { nodes, edges, strings } = snapshot;
  const count = nodes.length / nodeFields;
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const contextEdge = edgeTypes.indexOf('context');
  const propertyEdge = edgeTypes.indexOf('property');
  const internalEdge = edgeTypes.indexOf('internal');
  const elementEdge = edgeTypes.indexOf('element');
  const hiddenEdge = edgeTypes.indexOf('hidden');
  const closureType = nodeTypes.indexOf('closure');
  const codeType = nodeTypes.indexOf('code');
  const nameOf = (n: number) => strings[nodes[n * nodeFields + NAME]!] ?? '';
  const typeOf = (n: number) => nodes[n * nodeFields + TYPE]!;
  const edgeNameOf = (e: number) => {
    const type = edges[e + EDGE_TYPE]!;
    return type === elementEdge || type === hiddenEdge ? '' : (strings[edges[e + EDGE_NAME]!] ?? '');
  };

  // Each node's first edge (edges are stored in node order).
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0, e = 0; n < count; n++) {
    firstEdge[n] = e;
    e += nodes[n * nodeFields + EDGE_COUNT]! * edgeFields;
  }
  firstEdge[count] = edges.length;
  const essential = (from: number, e: number) => {
    const type = edges[e + EDGE_TYPE]!;
    return type !== weak && (type !== shortcut || from === 0);
  };

  // Depth-first postorder from the root (node 0) over essential edges.
  const postorder = new Uint32Array(count);
  const orderOf = new Int32Array(count).fill(-1);
  const visited = new Uint8Array(count);
  const stack = new Uint32Array(count);
  const cursor = new Uint32Array(count);
  let reached = 0;
  let top2 = 0;
  stack[0] = 0;
  cursor[0] = firstEdge[0]!;
  visited[0] = 1;
  while (top2 >= 0) {
    const n = stack[top2]!;
    const e = cursor[top2]!;
    if (e < firstEdge[n + 1]!) {
      cursor[top2] = e + edgeFields;
      if (!essential(n, e)) continue;
      const to = edges[e + TO]! / nodeFields;
      if (visited[to]) continue;
      visited[to] = 1;
      top2++;
      stack[top2] = to;
      cursor[top2] = firstEdge[to]!;
    } else {
      orderOf[n] = reached;
      postorder[reached++] = n;
      top2--;
    }
  }

  // Predecessors over essential edges, among reached nodes (compressed rows).
  const predecessorCount = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) {
    if (!visited[n]) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (essential(n, e)) predecessorCount[edges[e + TO]! / nodeFields + 1]!++;
  }
  for (let n = 0; n < count; n++) predecessorCount[n + 1]! += predecessorCount[n]!;
  const predecessors = new Uint32Array(predecessorCount[count]!);
  const fill = predecessorCount.slice(0, count);
  for (let n = 0; n < count; n++) {
    if (!visited[n]) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (essential(n, e)) predecessors[fill[edges[e + TO]! / nodeFields]!++] = n;
  }

  // Immediate dominators (Cooper, Harvey, Kennedy), in postorder numbers.
  const UNDEFINED = -1;
  const idom = new Int32Array(reached).fill(UNDEFINED);
  const rootOrder = orderOf[0]!;
  idom[rootOrder] = rootOrder;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = idom[a]!;
      while (b < a) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let order = reached - 1; order >= 0; order--) {
      if (order === rootOrder) continue;
      const n = postorder[order]!;
      let candidate = UNDEFINED;
      for (let p = predecessorCount[n]!; p < predecessorCount[n + 1]!; p++) {
        const from = orderOf[predecessors[p]!]!;
        if (from === -1 || idom[from] === UNDEFINED) continue;
        candidate = candidate === UNDEFINED ? from : intersect(from, candidate);
      }
      if (candidate !== UNDEFINED && idom[order] !== candidate) {
        idom[order] = candidate;
        changed = true;
      }
    }
  }

  // Where each script is: closure -shared-> SharedFunctionInfo -script-> Script -name-> its URL.
  const places = new Places();
  const edgeTo = (n: number, wanted: (name: string) => boolean) => {
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (wanted(edgeNameOf(e))) return edges[e + TO]! / nodeFields;
    return -1;
  };
  const scriptUrl = new Map<number, string>();
  const scriptOfNode = new Map<number, number>();
  const ownPlace = new Map<number, string>();
  const locationFields = meta.location_fields?.length ?? 4;
  const locations = snapshot.locations ?? [];
  for (let i = 0; i < locations.length; i += locationFields) {
    const n = locations[i]! / nodeFields;
    const [scriptId, line, column] = [locations[i + 1]!, locations[i + 2]!, locations[i + 3]!];
    if (!scriptUrl.has(scriptId) && typeOf(n) === closureType) {
      const shared = edgeTo(n, (name) => name === 'shared');
      const script = shared === -1 ? -1 : edgeTo(shared, (name) => name === 'script' || name === 'script_or_debug_info');
      const url = script === -1 ? -1 : edgeTo(script, (name) => name === 'name');
      scriptUrl.set(scriptId, url === -1 ? '' : nameOf(url));
      if (script !== -1) scriptOfNode.set(script, scriptId);
    }
    const place = places.at(scriptUrl.get(scriptId) ?? '', line, column);
    ownPlace.set(n, place);
    if (typeOf(n) === closureType) {
      const shared = edgeTo(n, (name) => name === 'shared');
      if (shared !== -1 && !ownPlace.has(shared)) ownPlace.set(shared, place);
    }
  }
  // Functions with no closure alive (never called, or their closures gone) have no location: they count for
  // their script as a whole.
  const scriptLabel = (url: string) => (url.startsWith('node:') ? placeOfFile(url) : url.startsWith('file://') ? path.relative(projectRoot, fileURLToPath(url)) : url);
  for (let n = 0; n < count; n++) {
    if (typeOf(n) !== codeType || ownPlace.has(n)) continue;
    const script = edgeTo(n, (name) => name === 'script_or_debug_info' || name === 'script');
    if (script === -1) continue;
    const url = nameOf(script);
    if (url.startsWith('file://') || url.startsWith('node:')) ownPlace.set(n, `(functions without a live closure) ${scriptLabel(url)}`);
  }
  for (const [script, scriptId] of scriptOfNode) {
    ownPlace.set(script, `(script source) ${scriptLabel(scriptUrl.get(scriptId) ?? '')}`);
  }

  // A scope belongs to the package whose functions close over it; one several packages share is split by
  // variable: where it is declared, else the package of at least 80 % of the scope's functions, if any.
  const scopePlaces = new Map<number, Map<string, number>>();
  for (let n = 0; n < count; n++) {
    if (typeOf(n) !== closureType || !ownPlace.has(n)) continue;
    const context = edgeTo(n, (name) => name === 'context');
    if (context === -1) continue;
    const counts = scopePlaces.get(context) ?? new Map<string, number>();
    counts.set(ownPlace.get(n)!, (counts.get(ownPlace.get(n)!) ?? 0) + 1);
    scopePlaces.set(context, counts);
  }
  const sharedScopes = new Map<number, string | undefined>();
  for (const [context, counts] of scopePlaces) {
    if (counts.size === 1) ownPlace.set(context, [...counts.keys()][0]!);
    else {
      const total = [...counts.values()].reduce((sum, value) => sum + value, 0);
      const [place, most] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
      sharedScopes.set(context, most >= total * 0.8 ? place : undefined);
    }
  }
  const variablePlace = new Map<number, string>();
  for (const [context, majority] of sharedScopes) {
    // Which script's top level this is: the scope's closures' script (the first with a declaration wins).
    const urls = [...new Set([...scriptUrl.values()].filter((url) => url.startsWith('file://')))];
    for (let e = firstEdge[context]!; e < firstEdge[context + 1]!; e += edgeFields) {
      if (edges[e + EDGE_TYPE] !== contextEdge) continue;
      const name = edgeNameOf(e);
      let found = false;
      for (const url of urls) {
        const place = places.declaration(url, name);
        if (place) {
          variablePlace.set(edges[e + TO]! / nodeFields, place);
          found = true;
          break;
        }
      }
      if (!found && majority !== undefined) variablePlace.set(edges[e + TO]! / nodeFields, majority);
    }
    ownPlace.set(context, majority ?? '(scopes shared by several packages)');
  }
  void propertyEdge;
  void internalEdge;

  // Down the dominator tree (reverse postorder: a dominator before what it dominates).
  const placeIds = new Map<string, number>();
  const placeNames: string[] = [];
  const placeId = (place: string) => {
    let id = placeIds.get(place);
    if (id === undefined) {
      id = placeNames.length;
      placeIds.set(place, id);
      placeNames.push(place);
    }
    return id;
  };
  const placeOfOrder = new Int32Array(reached);
  const internals = placeId('(V8 and Node internals, roots)');
  for (let order = reached - 1; order >= 0; order--) {
    const n = postorder[order]!;
    const own = ownPlace.get(n);
    if (own !== undefined) placeOfOrder[order] = placeId(own);
    else if (order === rootOrder) placeOfOrder[order] = internals;
    else if (nodes[n * nodeFields + SELF]! >= LARGE_STRING && nodeTypes[typeOf(n)]!.endsWith('string') && placeOfOrder[idom[order]!] === internals) {
      // A large string only V8 keeps (a literal in the string table, say) gets a row of its own.
      const text = nameOf(n);
      placeOfOrder[order] = placeId(`(large string) ${text.startsWith('AGFzbQ') ? 'a Wasm module in base64' : JSON.stringify(text.slice(0, 32).replace(/\s+/g, ' '))}`);
    }
    else {
      const dominator = postorder[idom[order]!]!;
      const viaVariable = sharedScopes.has(dominator) ? variablePlace.get(n) : undefined;
      placeOfOrder[order] = viaVariable !== undefined ? placeId(viaVariable) : placeOfOrder[idom[order]!]!;
    }
  }

  // Self sizes summed by place (= exclusive retained size), by type; retained sizes for the largest objects.
  const bytes = new Float64Array(placeNames.length);
  const objects = new Float64Array(placeNames.length);
  const code = new Float64Array(placeNames.length);
  const retained = new Float64Array(reached);
  const byType = new Map<string, { bytes: number; objects: number }>();
  let totalBytes = 0;
  const internalsByName = new Map<string, { bytes: number; objects: number }>();
  for (let order = 0; order < reached; order++) {
    const n = postorder[order]!;
    const self = nodes[n * nodeFields + SELF]!;
    const place = placeOfOrder[order]!;
    if (place === internals) {
      const type = nodeTypes[typeOf(n)] ?? '';
      const what = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? `${type}s` : `${type} ${nameOf(n).slice(0, 50)}`;
      const entry = internalsByName.get(what) ?? { bytes: 0, objects: 0 };
      entry.bytes += self;
      entry.objects++;
      internalsByName.set(what, entry);
    }
    bytes[place]! += self;
    objects[place]!++;
    const type = typeOf(n);
    if (type === codeType || type === closureType) code[place]! += self;
    const typeName = nodeTypes[type] ?? String(type);
    const entry = byType.get(typeName) ?? { bytes: 0, objects: 0 };
    entry.bytes += self;
    entry.objects++;
    byType.set(typeName, entry);
    totalBytes += self;
    retained[order]! += self;
    // Postorder: everything a node dominates comes before it.
    if (order !== rootOrder) retained[idom[order]!]! += retained[order]!;
  }
  const largest = [...retained.keys()]
    .filter((order) => order !== rootOrder && idom[order] !== rootOrder && !nameOf(postorder[order]!).startsWith('(GC roots)'))
    .sort((a, b) => retained[b]! - retained[a]!)
    .slice(0, 400)
    // Keep only the outermost of a chain (an object and the one array it holds are one thing).
    .filter((order, _, list) => !list.some((other) => other !== order && idom[order] === other && retained[other]! < retained[order]! * 1.2))
    .slice(0, top)
    .map((order) => {
      const n = postorder[order]!;
      return {
        name: nameOf(n).slice(0, 80),
        type: nodeTypes[typeOf(n)] ?? '',
        place: placeNames[placeOfOrder[order]!]!,
        retainedBytes: retained[order]!,
        selfBytes: nodes[n * nodeFields + SELF]!,
      };
    });
  return {
    totalBytes,
    nodeCount: reached,
    byPackage: placeNames
      .map((place, id) => ({ place, bytes: bytes[id]!, objects: objects[id]!, codeBytes: code[id]! }))
      .filter((entry) => entry.bytes > 0)
      .sort((a, b) => b.bytes - a.bytes),
    byType: [...byType].map(([type, entry]) => ({ type, ...entry })).sort((a, b) => b.bytes - a.bytes),
    internalsByName: [...internalsByName].map(([what, entry]) => ({ what, ...entry })).sort((a, b) => b.bytes - a.bytes).slice(0, top),
    largest,
  };
}

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
