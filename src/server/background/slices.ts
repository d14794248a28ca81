import { performance } from 'node:perf_hooks';

import { backgroundSliceDuration, backgroundUnitsDone, watchBackgroundBacklog } from '@/server/observability/metrics';

/**
 * Background work (sweeps, giving free pages back, retention) done in slices that never hold the event loop
 * for long, on timers of their own, so no request pays for it and none is needed for it to happen.
 *
 * Why slices: better-sqlite3 runs each statement synchronously, and a chain of awaited statements that never
 * waits on real I/O runs in one turn of the event loop: a sweep written as a plain loop of batches holds every
 * request for as long as the whole sweep takes (seconds, for tens of thousands of free pages). Here each slice
 * is one call of the job's `step`, sized from what the slices before it took so that one fits SLICE_BUDGET_MS
 * (sliceSizer), and the next starts from a timer once the process has had at least as long again for
 * everything else (one lane for all jobs): requests that came meanwhile go first, and the work takes at most
 * half the process's time. On PostgreSQL a slice waits on the network instead of holding the loop; the same
 * sizes keep its transactions short.
 *
 * A new job is a `step` (at most `size` units, in one go; one statement or one transaction on SQLite), a
 * backlog reader, and a name: startBackgroundJob.
 */
export const SLICE_BUDGET_MS = 10;

/** What one slice did: how many units of work (rows, pages), and whether any are left. */
export type SliceResult = { done: number; more: boolean };

/** One slice of a job: at most `size` units, in one go. */
export type Step = (size: number) => Promise<SliceResult>;

export type SliceSizes = {
  /** The first slice's size, a power of two; later ones follow what slices take. */
  initial: number;
  /** Never more than this in one slice (a bound on a statement's parameters, or a transaction's length). */
  max: number;
};

/**
 * The share of the budget a slice's CPU time is kept within, between the two: the rest of the budget is for
 * the commit's wait for the disk, which the size barely changes.
 */
const GROW_BELOW = 0.35;
const SHRINK_ABOVE = 0.7;

/**
 * Chooses each slice's size from the CPU time the ones before took. CPU time, not the wall clock: on a machine
 * shared with other work the wall clock of the same slice varies tenfold (a slice of one row took 2–30 ms
 * at a load of 14 on 2 cores), and a slice's commit waits for the disk whatever its size; neither is what a
 * smaller slice would save, and shrinking for them only makes the work last longer. The CPU time is what
 * the slice's size decides. One slow slice is not believed (a garbage collection, a WAL checkpoint), two in
 * a row at the same size are: the size halves after two slices over SHRINK_ABOVE of the budget (or one over
 * twice the budget), and doubles after two full slices under GROW_BELOW of it. Sizes stay powers of two, so
 * a query with a `LIMIT` of the size has a handful of texts to prepare, not one per size.
 */
export function sliceSizer(sizes: SliceSizes, budgetMs = SLICE_BUDGET_MS) {
  let size = sizes.initial;
  let recent: number[] = [];
  return {
    get size() {
      return size;
    },
    record(result: SliceResult, cpuMs: number): void {
      // The last slice of a run, partly filled, says nothing about a full one.
      if (result.done < size) return;
      recent = [...recent.slice(-1), cpuMs];
      const twice = recent.length === 2;
      if (size > 1 && (cpuMs > 2 * budgetMs || (twice && Math.min(...recent) > SHRINK_ABOVE * budgetMs))) {
        size /= 2;
        recent = [];
      } else if (size * 2 <= sizes.max && twice && Math.max(...recent) < GROW_BELOW * budgetMs) {
        size *= 2;
        recent = [];
      }
    },
  };
}

/**
 * One lane for every job's slices: one slice at a time in the process, and after each a rest as long as it
 * took (at least the budget) before the next, whichever job's it is. So all background work together takes
 * at most half the process's time, however many jobs have a backlog.
 */
const lane = { busy: false, waiting: [] as (() => void)[] };

function takeTurn(): Promise<void> {
  if (!lane.busy) {
    lane.busy = true;
    return Promise.resolve();
  }
  return new Promise((resolve) => lane.waiting.push(resolve));
}

function endTurn(restMs: number): void {
  setTimeout(() => {
    const next = lane.waiting.shift();
    if (next) next();
    else lane.busy = false;
  }, restMs).unref();
}

/**
 * Runs `step` until it reports nothing left, one slice per turn of the lane. The sizer is the job's, so a job
 * that runs again starts from what it learned.
 */
export async function runInSlices(
  step: Step,
  options: { sizer: ReturnType<typeof sliceSizer>; stopped: () => boolean; onSlice?: (result: SliceResult, elapsedMs: number) => void },
  budgetMs = SLICE_BUDGET_MS,
): Promise<number> {
  let total = 0;
  for (;;) {
    await takeTurn();
    if (options.stopped()) {
      endTurn(0);
      return total;
    }
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    let result: SliceResult;
    try {
      result = await step(options.sizer.size);
    } finally {
      endTurn(Math.max(budgetMs, performance.now() - started));
    }
    const elapsed = performance.now() - started;
    // The process's CPU time, all threads: the few others (garbage collection, the webhook sending thread)
    // add a little noise, which the sizer's two-in-a-row rule absorbs.
    const cpu = process.cpuUsage(cpuBefore);
    total += result.done;
    options.onSlice?.(result, elapsed);
    options.sizer.record(result, (cpu.user + cpu.system) / 1000);
    if (!result.more || options.stopped()) return total;
  }
}

export type BackgroundJob = {
  /** No new pass, nor slice; resolves once the slice running now (if any) has ended. */
  stop: () => Promise<void>;
};

export type BackgroundJobOptions = {
  /** The `job` label of its metrics: a fixed name. */
  name: string;
  /** A pass starts this often, and once at the start. */
  everyMs: number;
  step: Step;
  sizes: SliceSizes;
  /** What is waiting, in the step's units, read when /api/metrics is scraped (cheap: one count or pragma). */
  backlog?: () => Promise<number>;
  onError: (error: unknown) => void;
};

/**
 * A job that runs a pass in slices at the start and then every `everyMs`, whether or not any request comes;
 * passes never overlap. Its backlog and its slices are in /api/metrics (`plantstore_background_*`).
 */
export function startBackgroundJob(options: BackgroundJobOptions): BackgroundJob {
  const { name, step, sizes, onError } = options;
  let stopped = false;
  let running: Promise<void> | undefined;
  const state = {
    sizer: sliceSizer(sizes),
    stopped: () => stopped,
    onSlice: (result: SliceResult, elapsedMs: number) => {
      backgroundSliceDuration.observe({ job: name }, elapsedMs / 1000);
      if (result.done > 0) backgroundUnitsDone.inc({ job: name }, result.done);
    },
  };
  const pass = () => {
    if (stopped || running) return;
    running = runInSlices(step, state)
      .then(
        () => {},
        (error: unknown) => onError(error),
      )
      .finally(() => (running = undefined));
  };
  if (options.backlog) watchBackgroundBacklog(name, options.backlog);
  const timer = setInterval(pass, options.everyMs);
  timer.unref();
  // After the caller's own start-up steps, not within them.
  setImmediate(pass);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
