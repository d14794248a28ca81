/**
 * What a request costs the server, measured as the CPU time its main thread spends, read from outside
 * (/proc/<pid>/schedstat: nanoseconds on a CPU). Why this measure:
 *
 * - The main thread is the one event loop every request shares: its time is what one request takes from
 *   all the others (a 100 ms regular expression there is 100 ms in which nobody else is answered).
 * - CPU time, not wall time: a busy machine (other test files, other processes) delays the server without
 *   adding to it, so a bound on it does not turn flaky when the machine is loaded. What it does add (cache
 *   misses, a core shared with its sibling thread) is not nothing: a CI run measured 101 ms for a tRPC batch
 *   that cost 55–66 ms in every other run. A bound needs its request's quiet cost at half of it or less.
 * - Read from outside, it covers everything the process does for a request, Node's own parser and its
 *   refusals included, with no hook in the server.
 *
 * Requests measured this way are sent one at a time to a server that has nothing else to do; the little it
 * does meanwhile (timers, a garbage collection) is noise that repeating a request and keeping the least
 * removes.
 */
import { readFileSync } from 'node:fs';

/** Server time one request of a hostile suite may cost (the "say 50 ms of server time"). */
export const REQUEST_BUDGET_MS = 50;

/** Milliseconds the process's main thread has spent on a CPU since it started. */
export function mainThreadCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** Runs `action` and returns what it cost the server's main thread (ms) beside its result. */
export async function serverTime<T>(pid: number, action: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const before = mainThreadCpuMs(pid);
  const result = await action();
  return { result, ms: mainThreadCpuMs(pid) - before };
}

/** The least server time of `times` runs of `action` (a collection or a timer in one run is not the request's cost). */
export async function leastServerTime(pid: number, action: () => Promise<unknown>, times = 3): Promise<number> {
  let least = Infinity;
  for (let run = 0; run < times; run++) least = Math.min(least, (await serverTime(pid, action)).ms);
  return least;
}
