/**
 * A V8 heap snapshot's graph and its dominator tree: retained sizes by DevTools' classic rules (weak edges
 * ignored, shortcut edges only from the root; DevTools today drops a few more edges as inessential and
 * places 3.5 % of nodes under another dominator: docs/dependencies.md). The graph stays in the snapshot's
 * flat arrays; a server's snapshot holds millions of nodes, so nothing here makes an object per node.
 */
import { readFileSync } from 'node:fs';

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]]; location_fields?: string[] } };
  nodes: number[];
  edges: number[];
  strings: string[];
  locations?: number[];
};

/** A snapshot read for walking: node n's fields start at n * nodeFields, its edges at firstEdge[n]. */
export type HeapGraph = ReturnType<typeof readHeapGraph>;

export function readHeapGraph(file: string) {
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
  const elementEdge = edgeTypes.indexOf('element');
  const hiddenEdge = edgeTypes.indexOf('hidden');

  // Each node's first edge (edges are stored in node order).
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0, e = 0; n < count; n++) {
    firstEdge[n] = e;
    e += nodes[n * nodeFields + EDGE_COUNT]! * edgeFields;
  }
  firstEdge[count] = edges.length;

  const edgeNameOf = (e: number) => {
    const type = edges[e + EDGE_TYPE]!;
    return type === elementEdge || type === hiddenEdge ? '' : (strings[edges[e + EDGE_NAME]!] ?? '');
  };
  return {
    count,
    edges,
    edgeFields,
    nodeFields,
    nodeTypes,
    edgeTypes,
    firstEdge,
    /** (node, script id, line, column) per function, location_fields wide. */
    locations: snapshot.locations ?? [],
    locationFields: meta.location_fields?.length ?? 4,
    nameOf: (n: number) => strings[nodes[n * nodeFields + NAME]!] ?? '',
    typeOf: (n: number) => nodes[n * nodeFields + TYPE]!,
    selfOf: (n: number) => nodes[n * nodeFields + SELF]!,
    edgeTypeOf: (e: number) => edges[e + EDGE_TYPE]!,
    edgeNameOf,
    /** The node an edge points to. */
    targetOf: (e: number) => edges[e + TO]! / nodeFields,
    /** The node n's first edge whose name is wanted points to, or -1. */
    edgeTo: (n: number, wanted: (name: string) => boolean) => {
      for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (wanted(edgeNameOf(e))) return edges[e + TO]! / nodeFields;
      return -1;
    },
  };
}

/**
 * The dominator tree, in postorder numbers: postorder[order] is a node, orderOf[node] its number (-1 when
 * unreachable), idom[order] its immediate dominator's number. Reached nodes only; the root is node 0.
 */
export type DominatorTree = { reached: number; postorder: Uint32Array; orderOf: Int32Array; idom: Int32Array; rootOrder: number };

export function dominatorTree(graph: HeapGraph): DominatorTree {
  const { count, edgeFields, firstEdge, edgeTypes, targetOf } = graph;
  const weak = edgeTypes.indexOf('weak');
  const shortcut = edgeTypes.indexOf('shortcut');
  const essential = (from: number, e: number) => {
    const type = graph.edgeTypeOf(e);
    return type !== weak && (type !== shortcut || from === 0);
  };

  // Depth-first postorder from the root (node 0) over essential edges.
  const postorder = new Uint32Array(count);
  const orderOf = new Int32Array(count).fill(-1);
  const visited = new Uint8Array(count);
  const stack = new Uint32Array(count);
  const cursor = new Uint32Array(count);
  let reached = 0;
  let top = 0;
  stack[0] = 0;
  cursor[0] = firstEdge[0]!;
  visited[0] = 1;
  while (top >= 0) {
    const n = stack[top]!;
    const e = cursor[top]!;
    if (e < firstEdge[n + 1]!) {
      cursor[top] = e + edgeFields;
      if (!essential(n, e)) continue;
      const to = targetOf(e);
      if (visited[to]) continue;
      visited[to] = 1;
      top++;
      stack[top] = to;
      cursor[top] = firstEdge[to]!;
    } else {
      orderOf[n] = reached;
      postorder[reached++] = n;
      top--;
    }
  }

  // Predecessors over essential edges, among reached nodes (compressed rows).
  const predecessorCount = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) {
    if (!visited[n]) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (essential(n, e)) predecessorCount[targetOf(e) + 1]!++;
  }
  for (let n = 0; n < count; n++) predecessorCount[n + 1]! += predecessorCount[n]!;
  const predecessors = new Uint32Array(predecessorCount[count]!);
  const fill = predecessorCount.slice(0, count);
  for (let n = 0; n < count; n++) {
    if (!visited[n]) continue;
    for (let e = firstEdge[n]!; e < firstEdge[n + 1]!; e += edgeFields) if (essential(n, e)) predecessors[fill[targetOf(e)]!++] = n;
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
  return { reached, postorder, orderOf, idom, rootOrder };
}
