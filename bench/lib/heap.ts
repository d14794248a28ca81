/**
 * Where a server's memory goes: a V8 heap snapshot summarised by source package (the /proc view of the
 * same process is smaps.ts).
 *
 * Heap by package: the snapshot's retained sizes (the dominator tree, heap-graph.ts) are split among
 * packages. A function belongs to where its code is (its location in the bundle, mapped through the
 * bundle's source map to `node_modules/<pkg>` or `src/…`: places.ts); a closure scope (Context) to the
 * package of the functions that close over it; a variable of a scope that several packages share (the
 * bundle's top level, where esbuild hoists every ES module) to where the variable is declared. Every other
 * object belongs to its immediate dominator's package: what keeps it alive. So a package's figure is what
 * would go if the package's own code and scopes went (exclusive: a package inside it counts for itself). A
 * script's source text counts for the script.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { dominatorTree, readHeapGraph } from './heap-graph';
import { projectRoot } from './paths';
import { placeOfFile, Places } from './places';

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

const LARGE_STRING = 256 * 1024;

export function summariseHeapSnapshot(file: string, top = 25): HeapSummary {
  const graph = readHeapGraph(file);
  const { count, nodeFields, edgeFields, firstEdge, nodeTypes, edgeTypes, locations, locationFields, nameOf, typeOf, selfOf, edgeTypeOf, edgeNameOf, targetOf, edgeTo } = graph;
  const { reached, postorder, idom, rootOrder } = dominatorTree(graph);
  const contextEdge = edgeTypes.indexOf('context');
  const closureType = nodeTypes.indexOf('closure');
  const codeType = nodeTypes.indexOf('code');

  // Where each script is: closure -shared-> SharedFunctionInfo -script-> Script -name-> its URL.
  const places = new Places();
  const scriptUrl = new Map<number, string>();
  const scriptOfNode = new Map<number, number>();
  const ownPlace = new Map<number, string>();
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
      if (edgeTypeOf(e) !== contextEdge) continue;
      const name = edgeNameOf(e);
      let found = false;
      for (const url of urls) {
        const place = places.declaration(url, name);
        if (place) {
          variablePlace.set(targetOf(e), place);
          found = true;
          break;
        }
      }
      if (!found && majority !== undefined) variablePlace.set(targetOf(e), majority);
    }
    ownPlace.set(context, majority ?? '(scopes shared by several packages)');
  }

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
    else if (selfOf(n) >= LARGE_STRING && nodeTypes[typeOf(n)]!.endsWith('string') && placeOfOrder[idom[order]!] === internals) {
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
    const self = selfOf(n);
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
        selfBytes: selfOf(n),
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
