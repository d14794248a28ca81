import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

import { describe, expect, it } from 'vitest';

import { Refusal } from '../reply';

import { createWorkQueue } from './work-queue';

/** An answer that closes when the test says so: all the queue reads of a ServerResponse. */
const answer = () => {
  const emitter = new EventEmitter() as unknown as ServerResponse & EventEmitter & { closed: boolean };
  emitter.closed = false;
  emitter.once('close', () => (emitter.closed = true));
  return emitter;
};
const settled = async () => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the work queue', () => {
  it('works on at most its capacity of calls, gives turns in arrival order, and frees places when answers close', async () => {
    const waitForTurn = createWorkQueue(10);
    const started: string[] = [];
    const [first, batch, single] = [answer(), answer(), answer()];
    void waitForTurn(6, first).then(() => started.push('first (6 calls)'));
    void waitForTurn(10, batch).then(() => started.push('batch (10 calls)'));
    // Fits beside the first, but comes after the batch: it waits its turn, so batches are never starved.
    void waitForTurn(1, single).then(() => started.push('single'));
    await settled();
    expect(started).toEqual(['first (6 calls)']);
    first.emit('close');
    await settled();
    expect(started).toEqual(['first (6 calls)', 'batch (10 calls)']);
    batch.emit('close');
    await settled();
    expect(started).toEqual(['first (6 calls)', 'batch (10 calls)', 'single']);
  });

  it('gives up the turn of a client that leaves while it waits, and the places of one that leaves before it starts', async () => {
    const waitForTurn = createWorkQueue(1);
    const [working, leaving, next] = [answer(), answer(), answer()];
    await waitForTurn(1, working);
    const left = waitForTurn(1, leaving);
    let nextStarted = false;
    void waitForTurn(1, next).then(() => (nextStarted = true));
    leaving.emit('close');
    await expect(left).rejects.toBeInstanceOf(Refusal);
    working.emit('close');
    await settled();
    expect(nextStarted).toBe(true);
    // Its turn given but not yet started when it leaves: the place still comes back.
    const [holder, gone, last] = [answer(), answer(), answer()];
    const queue = createWorkQueue(1);
    await queue(1, holder);
    const goneTurn = queue(1, gone);
    holder.emit('close');
    gone.emit('close');
    await expect(goneTurn).rejects.toBeInstanceOf(Refusal);
    await expect(queue(1, last)).resolves.toBeUndefined();
  });

  it('takes no place for a client that left before it asked for a turn (while its token or its rate limit was checked)', async () => {
    const waitForTurn = createWorkQueue(1);
    const left = answer();
    left.emit('close');
    await expect(waitForTurn(1, left)).rejects.toBeInstanceOf(Refusal);
    // The one place is still free.
    await expect(waitForTurn(1, answer())).resolves.toBeUndefined();
  });

  it('works on its capacity of single calls at once, and the next waits for a place', async () => {
    const waitForTurn = createWorkQueue(10);
    const answers = Array.from({ length: 11 }, answer);
    const started = new Set<number>();
    answers.forEach((response, index) => void waitForTurn(1, response).then(() => started.add(index)));
    await settled();
    expect(started.size).toBe(10);
    expect(started.has(10)).toBe(false);
    answers[3]!.emit('close');
    await settled();
    expect(started.has(10)).toBe(true);
  });

  it('starts a request that finds its places free at once, without waiting a turn of the event loop', async () => {
    const waitForTurn = createWorkQueue(2);
    let turnOfTheLoop = false;
    setImmediate(() => (turnOfTheLoop = true));
    await waitForTurn(1, answer());
    // The last free place too.
    await waitForTurn(1, answer());
    expect(turnOfTheLoop).toBe(false);
  });

  it('refuses a client that left before its turn as a body timeout, saying so', async () => {
    const waitForTurn = createWorkQueue(1);
    await waitForTurn(1, answer());
    const leaving = answer();
    const turn = waitForTurn(1, leaving);
    leaving.emit('close');
    await expect(turn).rejects.toMatchObject({ problem: { kind: 'bodyTimeout', message: 'the client closed the connection before its turn' } });
  });

  it('never hands out the place of a request still being worked on when a waiting client leaves', async () => {
    const waitForTurn = createWorkQueue(1);
    const [working, leaving, next] = [answer(), answer(), answer()];
    await waitForTurn(1, working);
    void waitForTurn(1, leaving).catch(() => {});
    let nextStarted = false;
    void waitForTurn(1, next).then(() => (nextStarted = true));
    leaving.emit('close');
    await settled();
    expect(nextStarted).toBe(false);
    working.emit('close');
    await settled();
    expect(nextStarted).toBe(true);
  });

  it('keeps the turn of the one behind when a client leaves after its own turn was given', async () => {
    const waitForTurn = createWorkQueue(1);
    const [holder, gone, behind] = [answer(), answer(), answer()];
    await waitForTurn(1, holder);
    const goneTurn = waitForTurn(1, gone);
    let behindStarted = false;
    void waitForTurn(1, behind).then(() => (behindStarted = true));
    holder.emit('close');
    gone.emit('close');
    await expect(goneTurn).rejects.toBeInstanceOf(Refusal);
    await settled();
    expect(behindStarted).toBe(true);
  });
});
