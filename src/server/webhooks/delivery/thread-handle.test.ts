/**
 * The sending thread (thread-entry.ts) behind the delivery worker, against real receivers and the real test
 * database: a batch keeps its order through a failure, a thread that dies loses nothing, a stop in the
 * middle of a batch writes down what was answered, the thread sends while the main thread is busy, and an
 * idle thread stops and comes back with the next batch without losing, repeating or reordering any.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';

import { afterEach, describe, expect, it } from 'vitest';

import type { Receiver } from '@test-support/webhook-receiver';
import { until, webhookWorkerTests } from '@test-support/webhook-worker';

import type { BatchToSend } from './batch-in-order';
import { sendingThread } from './thread-handle';

const { log, logged, admin, worker, receiver, endpoint, deliveries } = webhookWorkerTests('thread-admin');
const cleanups: (() => Promise<unknown>)[] = [];

let nextId = 50_000n;
/** Creates plants with no worker running, so the worker finds them all waiting: one batch. */
async function createPlants(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const id = nextId++;
    await admin().caller.plants.create({ id, name: `threaded ${id}` });
    ids.push(String(id));
  }
  return ids;
}
const idOf = (body: string) => /"id":(-?\d+)/.exec(body)![1]!;
/** How many idle stops the log has told of so far (it keeps every test's lines). */
const idleStops = () => logged.filter((line) => line.message.startsWith('webhook sending thread stopped')).length;
/** The ids in the order they first arrived (a re-sent delivery after a crash arrives twice). */
const firstArrivals = (hook: Receiver) => [...new Set(hook.received.map((request) => idOf(request.body)))];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

describe('the sending thread', () => {
  it('keeps the order across a batch with a failure in the middle: the newer ones wait, then go in order', { timeout: 60_000 }, async () => {
    const hook = await receiver();
    // The fifth request fails once; everything else is answered at once.
    hook.answer((_, index) => (index === 4 ? { status: 500, body: 'not now' } : { status: 204 }));
    const { id } = await endpoint(hook.url);
    const ids = await createPlants(10);
    worker();
    await hook.waitFor(11, 20_000);
    // 1–4, the fifth (failed), the fifth again after its wait, then 6–10: nothing newer went before the retry.
    expect(hook.received.map((request) => idOf(request.body))).toEqual([...ids.slice(0, 5), ...ids.slice(4)]);
    expect(hook.maxConcurrent()).toBe(1);
    const rows = await until(() => deliveries(id), (all) => all.every((row) => row.status === 'delivered'));
    expect(rows.map((row) => row.attempts)).toEqual([1, 1, 1, 1, 2, 1, 1, 1, 1, 1]);
  });

  it('survives its thread dying mid-batch: a new thread carries on, and every event arrives (at least once, in order)', { timeout: 60_000 }, async () => {
    const hook = await receiver();
    // The fourth request hangs: the batch is in the thread, three answered and not yet written down.
    hook.answer((_, index) => (index === 3 ? { hang: true } : { status: 204 }));
    const { id } = await endpoint(hook.url);
    const ids = await createPlants(8);
    const transport = sendingThread(log);
    worker({ transport });
    await hook.waitFor(4, 20_000);
    const first = transport.running()!;
    await first.terminate();
    // Sent again from the first not written down, by a new thread, after the worker's back-off.
    const rows = await until(() => deliveries(id), (all) => all.every((row) => row.status === 'delivered'));
    expect(transport.running()).toBeDefined();
    expect(transport.running()).not.toBe(first);
    expect(firstArrivals(hook)).toEqual(ids);
    // Nothing after the hanging one was sent before it was sent again: order kept through the crash.
    const arrived = hook.received.map((request) => idOf(request.body));
    expect(arrived.indexOf(ids[4]!)).toBeGreaterThan(arrived.lastIndexOf(ids[3]!));
    expect(rows.every((row) => row.attempts >= 1)).toBe(true);
    expect(logged.some((line) => line.message === 'webhook worker: delivering failed')).toBe(true);
  });

  it('on stop in the middle of a batch, finishes the attempt in flight, starts no other, and writes down what was answered', { timeout: 60_000 }, async () => {
    // The third request is answered only once the stop has begun.
    const arrived: string[] = [];
    let answerThird: (() => void) | undefined;
    const server = http.createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        arrived.push(idOf(Buffer.concat(parts).toString('utf8')));
        if (arrived.length === 3) answerThird = () => response.writeHead(204).end();
        else response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const { id } = await endpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    const ids = await createPlants(6);
    const running = worker();
    await until(() => answerThird, (answer) => answer !== undefined);
    const stopping = running.stop();
    setTimeout(() => answerThird!(), 200);
    await stopping;
    // Three delivered and written down (the third finished after the stop began); the rest never
    // started: nothing lost, nothing sent after the stop.
    expect(arrived).toEqual(ids.slice(0, 3));
    const rows = await deliveries(id);
    expect(rows.map((row) => [row.status, row.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
      ['delivered', 1],
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    // Another worker (the restarted server) sends the rest, in order.
    worker();
    await until(() => arrived.length, (count) => count >= 6);
    expect(arrived).toEqual(ids);
  });

  it('keeps sending a batch while the main thread is blocked (before it, each delivery waited for a turn of the main loop)', { timeout: 90_000 }, async () => {
    // The receiver runs in a thread of its own and counts into shared memory, so this thread can wait
    // for the count while its own event loop takes no turn at all, as under a flood of creates.
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const receiverThread = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      const http = require('node:http');
      const counter = workerData;
      let held;
      let released = false;
      parentPort.on('message', () => { released = true; held?.(); });
      const server = http.createServer((request, response) => {
        request.resume();
        request.on('end', () => {
          const count = Atomics.add(counter, 0, 1) + 1;
          Atomics.notify(counter, 0);
          const answer = () => response.writeHead(204).end();
          // The first is held until the test is ready to block.
          if (count === 1 && !released) held = answer;
          else answer();
        });
      });
      server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
      `,
      { eval: true, workerData: counter },
    );
    cleanups.push(() => receiverThread.terminate());
    const port = await new Promise<number>((resolve) => receiverThread.once('message', resolve));
    const count = 20;
    await endpoint(`http://127.0.0.1:${port}/hook`);
    await createPlants(count);
    worker();
    await until(() => Atomics.load(counter, 0), (received) => received >= 1);
    // Release the first answer, then block this thread until every delivery arrived (or a bound against a hang).
    receiverThread.postMessage('go');
    const deadline = Date.now() + 30_000;
    for (let seen = Atomics.load(counter, 0); seen < count && Date.now() < deadline; seen = Atomics.load(counter, 0)) {
      Atomics.wait(counter, 0, seen, 1_000);
    }
    expect(Atomics.load(counter, 0)).toBe(count);
  });

  it('stops when it has held no batch for its idle time, and the next batch starts a new one', { timeout: 60_000 }, async () => {
    const stopsBefore = idleStops();
    const hook = await receiver();
    const { id } = await endpoint(hook.url);
    const before = await createPlants(3);
    const transport = sendingThread(log, { idleStopMs: 200 });
    worker({ transport });
    await hook.waitFor(3, 20_000);
    const first = transport.running()!;
    expect(first).toBeDefined();
    // The thread itself ends (its memory goes with it), not only the transport's reference to it.
    await once(first, 'exit');
    expect(transport.running()).toBeUndefined();
    expect(idleStops() - stopsBefore).toBe(1);
    // The next event starts a new thread, which sends it after the earlier ones, each once.
    const after = await createPlants(3);
    await hook.waitFor(6, 20_000);
    expect(hook.received.map((request) => idOf(request.body))).toEqual([...before, ...after]);
    expect(transport.running()).toBeDefined();
    expect(transport.running()).not.toBe(first);
    const rows = await until(() => deliveries(id), (all) => all.every((row) => row.status === 'delivered'));
    expect(rows.map((row) => row.attempts)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('sends a batch handed over at the very moment the idle thread stops on a new thread: once, and after the batch before it', { timeout: 60_000 }, async () => {
    const hook = await receiver();
    const transport = sendingThread(log, { idleStopMs: 100 });
    cleanups.push(() => transport.close());
    const batchOf = (ids: number[]): BatchToSend => ({
      endpointId: 1,
      url: hook.url,
      secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      deliveries: ids.map((n) => ({ id: n, eventId: `evt_${n}`, payload: JSON.stringify({ data: { id: n } }) })),
      traced: false,
      timeoutMs: 10_000,
      slowMs: 10_000,
      policy: { allowHttp: true, allowPrivate: true },
    });
    const stop = new AbortController().signal;
    expect((await transport.send(batchOf([1, 2, 3]), { onSlow: () => {}, stop })).map((attempt) => attempt.result.ok)).toEqual([true, true, true]);
    const first = transport.running()!;
    // The next batch is handed over inside the stop itself: when the transport tells the idle thread to end.
    let handedOver: Promise<unknown> | undefined;
    const terminate = first.terminate.bind(first);
    first.terminate = () => {
      handedOver ??= transport.send(batchOf([4, 5, 6]), { onSlow: () => {}, stop });
      return terminate();
    };
    await once(first, 'exit');
    expect(handedOver).toBeDefined();
    const sent = (await handedOver) as { deliveryId: number; result: { ok: boolean } }[];
    expect(sent.map((attempt) => [attempt.deliveryId, attempt.result.ok])).toEqual([
      [4, true],
      [5, true],
      [6, true],
    ]);
    expect(hook.received.map((request) => idOf(request.body))).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(transport.running()).not.toBe(first);
  });

  it('loses, repeats and reorders nothing while events come at about its idle time, the thread stopping and starting between them', { timeout: 120_000 }, async () => {
    const stopsBefore = idleStops();
    const hook = await receiver();
    const { id } = await endpoint(hook.url);
    const idleStopMs = 40;
    const transport = sendingThread(log, { idleStopMs });
    worker({ transport });
    const ids: string[] = [];
    // Pauses around the idle time, below, at and above it, so events meet a running thread, one stopping,
    // and none.
    for (let index = 0; index < 40; index++) {
      ids.push(...(await createPlants(1)));
      await new Promise((resolve) => setTimeout(resolve, (index % 5) * 20));
    }
    await hook.waitFor(ids.length, 30_000);
    const rows = await until(() => deliveries(id), (all) => all.length === ids.length && all.every((row) => row.status === 'delivered'));
    expect(hook.received.map((request) => idOf(request.body))).toEqual(ids);
    expect(rows.every((row) => row.attempts === 1)).toBe(true);
    // It did stop and start again along the way (the log says so at each stop).
    expect(idleStops() - stopsBefore).toBeGreaterThan(1);
  });
});
