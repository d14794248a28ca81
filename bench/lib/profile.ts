/**
 * Reads a V8 .cpuprofile (`node --cpu-prof`) and sums self time by function and by where the code lives
 * (a package under node_modules, a file under src/, Node's internals, GC), within a window of time, so
 * that start-up is left out and each workload is seen alone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Places } from './places';
import { projectRoot } from './paths';

// The compiled server is a bundle: its frames are mapped back to their sources through its source maps.
const bundlePlaces = new Places();

type CallFrame = { functionName: string; url: string; lineNumber: number; columnNumber: number };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

export type ProfileSummary = {
  /** Milliseconds of samples counted (after the cut), and how many of them were idle. */
  totalMs: number;
  idleMs: number;
  /** Self time: the code that was running. */
  byPlace: { place: string; ms: number; share: number }[];
  /** Inclusive time: samples with this place anywhere on the stack (synchronous stacks only: an await starts a new one). */
  inclusiveByPlace: { place: string; ms: number; share: number }[];
  byFunction: { fn: string; place: string; ms: number; share: number }[];
};

/** Where a frame's code lives: `pkg:<name>`, `src/<file>`, `node:<module>`, or V8's own pseudo-frames. */
export function placeOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(program)') return '(program: native code outside JS)';
    return `(native) ${functionName || 'anonymous'}`;
  }
  if (url.startsWith('wasm://')) return 'wasm';
  if (url.startsWith('node:')) {
    // node:internal/deps/undici/undici → node:internal/deps/undici (fetch's Request/Response/Headers); node:internal/streams/… → node:internal/streams.
    const parts = url.slice('node:'.length).split('/');
    return `node:${parts.slice(0, parts[0] === 'internal' ? (parts[1] === 'deps' ? 3 : 2) : 1).join('/')}`;
  }
  if (/\.mjs$/.test(url) && url.includes('/.bench-build/')) return bundlePlaces.at(url, frame.lineNumber, frame.columnNumber);
  let file = url;
  if (url.startsWith('file://')) {
    try {
      file = fileURLToPath(url);
    } catch {
      file = url;
    }
  }
  const modules = file.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = file.slice(modules + '/node_modules/'.length).split('/');
    const name = parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
    return `pkg:${name}`;
  }
  if (file.startsWith(projectRoot)) return path.relative(projectRoot, file);
  return file;
}

/** `file:line` of a frame: in the original source for the bundle's frames (through its source map). */
function whereInSource(frame: CallFrame, place: string): string {
  if (/\.mjs$/.test(frame.url) && frame.url.includes('/.bench-build/')) {
    const located = bundlePlaces.locate(frame.url, frame.lineNumber, frame.columnNumber);
    if (located.file) {
      const modules = located.file.lastIndexOf('/node_modules/');
      const shown = modules !== -1 ? located.file.slice(modules + '/node_modules/'.length) : path.relative(projectRoot, located.file);
      return `${shown}:${located.line}`;
    }
  }
  return `${place}:${frame.lineNumber + 1}`;
}

/** `fromMs`/`toMs`: the window to count, in milliseconds after the profile's first sample. */
export function summariseProfile(file: string, fromMs: number, toMs: number, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfByNode = new Map<number, number>();
  let time = 0;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    time += profile.timeDeltas[i] ?? 0;
    // A sample stands for the time until the next one.
    const duration = profile.timeDeltas[i + 1] ?? 0;
    if (time < fromMs * 1000 || time > toMs * 1000) continue;
    const id = profile.samples[i]!;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + duration);
    totalUs += duration;
  }
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const stackPlaces = new Map<number, Set<string>>();
  const placesOnStack = (id: number): Set<string> => {
    let places = stackPlaces.get(id);
    if (!places) {
      const parent = parents.get(id);
      places = new Set(parent === undefined ? [] : placesOnStack(parent));
      places.add(placeOf(nodes.get(id)!.callFrame));
      stackPlaces.set(id, places);
    }
    return places;
  };
  const inclusive = new Map<string, number>();
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, { place: string; us: number }>();
  let idleUs = 0;
  for (const [id, us] of selfByNode) {
    const frame = nodes.get(id)!.callFrame;
    const place = placeOf(frame);
    if (place === '(idle)') idleUs += us;
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    if (place !== '(idle)') for (const onStack of placesOnStack(id)) inclusive.set(onStack, (inclusive.get(onStack) ?? 0) + us);
    const key = `${frame.functionName || '(anonymous)'} ${frame.url ? whereInSource(frame, place) : ''}`.trim();
    const entry = byFunction.get(key) ?? { place, us: 0 };
    entry.us += us;
    byFunction.set(key, entry);
  }
  const busyUs = totalUs - idleUs || 1;
  const ms = (us: number) => Math.round(us / 100) / 10;
  const share = (us: number) => Math.round((us / busyUs) * 1000) / 10;
  return {
    totalMs: ms(totalUs),
    idleMs: ms(idleUs),
    byPlace: [...byPlace]
      .filter(([place]) => place !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([place, us]) => ({ place, ms: ms(us), share: share(us) })),
    inclusiveByPlace: [...inclusive]
      // The microtask runner is on nearly every stack; it says nothing.
      .filter(([place]) => (!place.startsWith('(') || place === '(gc)') && place !== 'node:internal/process')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([place, us]) => ({ place, ms: ms(us), share: share(us) })),
    byFunction: [...byFunction]
      .filter(([, entry]) => entry.place !== '(idle)')
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, top)
      .map(([fn, entry]) => ({ fn, place: entry.place, ms: ms(entry.us), share: share(entry.us) })),
  };
}
