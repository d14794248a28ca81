import type { Actor } from './permissions';

/**
 * The streams a token holds open (a live feed, a CSV export), so that what ends the token's access ends them
 * too, on any instance, and not only the next request: the token's revoke, its expiry, its user's deletion, a
 * change of who it speaks for (a demotion). The streams register here; tokens/held-access.ts decides which to end
 * (it reads the tokens' state whenever access changes, and once for each stream registered), and the stream ends
 * itself as `end` says.
 *
 * `accessEnded`: the token is no longer valid; the stream says so (401) where it can. `actorChanged`: the token
 * still works but speaks for someone else now (another role or name); the stream ends as a time limit ends it,
 * so its client reconnects through the guards and resumes as who it is now.
 */
export type StreamEnding = 'accessEnded' | 'actorChanged';

export type HeldStream = { readonly tokenId: number; readonly actor: Actor; readonly end: (why: StreamEnding) => void };

const held = new Set<HeldStream>();
const heldListeners = new Set<(stream: HeldStream) => void>();

/** Registers an open stream; returns its release, to call once it ended (any number of times). */
export function holdStream(stream: HeldStream): () => void {
  held.add(stream);
  for (const listener of heldListeners) listener(stream);
  return () => {
    held.delete(stream);
  };
}

/** The streams open now. */
export function heldStreams(): ReadonlySet<HeldStream> {
  return held;
}

/** Told of every stream registered from now on (its token's state is checked once it is held: nothing slips between). */
export function onStreamHeld(listener: (stream: HeldStream) => void): () => void {
  heldListeners.add(listener);
  return () => heldListeners.delete(listener);
}
