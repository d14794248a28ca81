import type { ServerResponse } from 'node:http';

import { refuse } from '../reply';

/**
 * Procedure calls carried out at once, server-wide: one full tRPC batch, or ten single calls (as many as the
 * PostgreSQL pool's default connections). The server has one event loop; a request's work mostly runs
 * without yielding once it starts (better-sqlite3 answers synchronously, serialising a page is one block),
 * so every request being worked on at once is a block `/api/health` may wait behind. Capping the calls in
 * progress bounds that wait to about ten calls' time, however many connections a flood opens (sixteen
 * connections of ten-list batches hold the health check under 100 ms; 380 ms without the cap).
 */
export const MAX_CALLS_AT_ONCE = 10;

/**
 * Waits for a request's turn to be worked on: it takes as many places as it makes calls (a batch its
 * calls) and holds them until its answer is sent. Turns are given in arrival order, so a batch is not
 * starved by single calls; a request that finds its places free and nobody waiting starts at once. A request is queued only once its token is checked and its body read: neither
 * an anonymous client nor a slow body can hold a place. A client that leaves while it waits gives up its turn.
 */
export function createWorkQueue(capacity = MAX_CALLS_AT_ONCE) {
  let inUse = 0;
  const waiting: { places: number; start: () => void }[] = [];

  function startWhatFits(): void {
    while (waiting.length > 0 && inUse + waiting[0]!.places <= capacity) {
      const turn = waiting.shift()!;
      inUse += turn.places;
      // On the next turn of the event loop, not now: a turn given at once would run in the same tick as the
      // answer that freed its places, and the queue would drain without ever letting I/O (a health check,
      // a new connection) in between.
      setImmediate(turn.start);
    }
  }

  const gone = () => refuse('bodyTimeout', 'the client closed the connection before its turn');

  return function waitForTurn(calls: number, response: ServerResponse): Promise<void> {
    // A client that left while its request was read or checked (a token looked up, a slice of its rate-limit
    // budget asked for) has closed its answer before the listeners below could hear it: the places it took
    // would never come back, and ten such requests would leave no place to anyone.
    if (response.closed) return Promise.reject(gone());
    const places = Math.min(Math.max(calls, 1), capacity);
    // Places free and nobody waiting: the request goes on at once, on the turn of the I/O that brought it,
    // which nothing else is waiting to follow. (A setImmediate here would cost every request a turn of the
    // event loop.)
    if (waiting.length === 0 && inUse + places <= capacity) {
      inUse += places;
      response.once('close', () => {
        inUse -= places;
        startWhatFits();
      });
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      let state: 'waiting' | 'started' | 'closed' = 'waiting';
      const release = () => {
        inUse -= places;
        startWhatFits();
      };
      const turn = {
        places,
        start: () => {
          if (state === 'closed') {
            release();
            return reject(gone());
          }
          state = 'started';
          resolve();
        },
      };
      // The answer is sent (or the client left): the places go to the next in line.
      response.once('close', () => {
        const was = state;
        state = 'closed';
        if (was === 'started') return release();
        const index = waiting.indexOf(turn);
        if (index < 0) return; // given, its start pending: start gives them back
        waiting.splice(index, 1);
        startWhatFits();
        reject(gone());
      });
      waiting.push(turn);
      startWhatFits();
    });
  };
}

export type WaitForTurn = ReturnType<typeof createWorkQueue>;
