import 'server-only';

import { type HeldStream, heldStreams, onStreamHeld, type StreamEnding } from '@/server/auth/held-streams';
import { onDatabaseSignal } from '@/server/db/signals';

import { forgetAcceptedTokens, onAcceptedTokensForgotten } from './cache';
import { type TokenState, tokenStates } from './service';

/** setTimeout's longest delay (about 24.8 days): a later expiry is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Keeps what this process honours in step with what decides access, whoever changed it: when the database signals
 * a change (db/signals.ts: another instance, the token command, psql) the accepted tokens are forgotten, and
 * whenever they are (here too, after a revoke or a role change made in this process) the tokens of the open
 * streams are read again, in one query, and a stream whose token was revoked, expired, deleted or now speaks for
 * someone else ends (auth/held-streams.ts). A stream's token is also read once when the stream is held (a
 * change that committed between the stream's authentication and its registration is seen there), and a stream
 * whose token has an expiry ends when it comes.
 */
export function watchAccess(log: { error: (fields: object, message: string) => void }): { stop: () => void } {
  /** Tokens to read; `all` reads every held stream's. */
  const wanted = new Set<number>();
  let all = false;
  let reading: Promise<void> | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;

  function want(tokenIds: Iterable<number> | 'all'): void {
    if (tokenIds === 'all') all = true;
    else for (const id of tokenIds) wanted.add(id);
    // Several changes of one turn (a statement's signal, and the streams it ends) take one read.
    reading ??= new Promise<void>((resolve) => setImmediate(resolve)).then(readAndDecide);
  }

  async function readAndDecide(): Promise<void> {
    const streams = [...heldStreams()].filter((stream) => all || wanted.has(stream.tokenId));
    all = false;
    wanted.clear();
    try {
      if (streams.length > 0) decide(streams, await tokenStates([...new Set(streams.map((stream) => stream.tokenId))]));
    } catch (error) {
      // The database did not answer: the next change, or the stream's own end, is the next chance.
      log.error({ err: error }, "reading the open streams' tokens failed");
    } finally {
      reading = undefined;
      if (all || wanted.size > 0) want([]);
    }
  }

  function decide(streams: HeldStream[], states: TokenState[]): void {
    const byId = new Map(states.map((state) => [state.id, state]));
    const now = Date.now();
    for (const stream of streams) {
      const ending = endingOf(stream, byId.get(stream.tokenId), now);
      if (ending) stream.end(ending);
    }
    scheduleExpiry(now);
  }

  /** The next expiry among the open streams' tokens, read again when it comes. */
  const expiries = new Map<number, number>();
  function endingOf(stream: HeldStream, state: TokenState | undefined, now: number): StreamEnding | undefined {
    if (!state || state.revokedAt !== null || (state.expiresAt !== null && state.expiresAt.getTime() <= now)) return 'accessEnded';
    if (state.expiresAt !== null) expiries.set(stream.tokenId, state.expiresAt.getTime());
    const { actor } = stream;
    if (state.actor.userId !== actor.userId || state.actor.name !== actor.name || state.actor.role !== actor.role) return 'actorChanged';
    return undefined;
  }

  function scheduleExpiry(now: number): void {
    const open = new Set([...heldStreams()].map((stream) => stream.tokenId));
    for (const id of expiries.keys()) if (!open.has(id)) expiries.delete(id);
    clearTimeout(expiryTimer);
    if (expiries.size === 0) return;
    const next = Math.min(...expiries.values());
    expiryTimer = setTimeout(() => {
      const due = [...expiries].filter(([, at]) => at <= Date.now()).map(([id]) => id);
      for (const id of due) expiries.delete(id);
      want(due.length > 0 ? due : []);
      if (due.length === 0) scheduleExpiry(Date.now());
    }, Math.min(Math.max(next - now, 0), LONGEST_TIMER_MS));
    expiryTimer.unref();
  }

  const stops = [
    onDatabaseSignal('access', forgetAcceptedTokens),
    onAcceptedTokensForgotten(() => want('all')),
    onStreamHeld((stream) => want([stream.tokenId])),
  ];
  return {
    stop() {
      for (const stop of stops) stop();
      clearTimeout(expiryTimer);
    },
  };
}
