/**
 * When the delivery worker looks for work: at once when woken, at each time it was asked to wake at, and
 * (for a sender lingering on its endpoint) at the next wake-up or after a while, whichever comes first.
 * Every time asked for is kept, not only the earliest: a wake-up made good only by the poll is a bug.
 */
export type WakeUps = {
  /** Wakes the worker now, and every sender waiting in nextWake. */
  wake: () => void;
  /** Wakes the worker at `at` (Unix ms). */
  wakeAt: (at: number) => void;
  /** Resolves at the next wake-up, or after `ms`. */
  nextWake: (ms: number) => Promise<void>;
  /** Forgets every time asked for (the worker stops). */
  clear: () => void;
};

/** Retry times kept with a timer; past that, the poll finds what is due. */
const WAKE_TIMES_MAX = 10_000;

export function wakeUps(look: () => void): WakeUps {
  /** Every time (Unix ms) the worker was asked to wake at, earliest first; the timer waits for the first. */
  const wakeTimes: number[] = [];
  let dueTimer: NodeJS.Timeout | undefined;
  let cleared = false;
  let wakeWaiters: (() => void)[] = [];

  /**
   * A retry due in 100 ms must not make the worker forget one due in 3 s (that one waited for the next poll).
   */
  function wakeAt(at: number): void {
    if (cleared) return;
    let index = wakeTimes.findIndex((time) => time >= at);
    if (index === -1) index = wakeTimes.length;
    if (wakeTimes[index] === at) return;
    wakeTimes.splice(index, 0, at);
    // Bounded (a retry per failing endpoint): the latest times left out are found by the poll instead.
    if (wakeTimes.length > WAKE_TIMES_MAX) wakeTimes.pop();
    if (index === 0) waitForFirstWakeTime();
  }

  function waitForFirstWakeTime(): void {
    clearTimeout(dueTimer);
    const first = wakeTimes[0];
    if (first === undefined) return;
    dueTimer = setTimeout(() => {
      // A timer can fire a millisecond before Date.now() reaches its time (libuv's clock is not Date's):
      // a time not reached yet stays, and its wake-up comes a moment later instead of at the next poll.
      const now = Date.now();
      const reached = wakeTimes.findIndex((time) => time > now);
      const passed = wakeTimes.splice(0, reached === -1 ? wakeTimes.length : reached).length;
      waitForFirstWakeTime();
      if (passed > 0) wake();
    }, Math.max(0, first - Date.now()));
    dueTimer.unref();
  }

  function wake(): void {
    const waiters = wakeWaiters;
    wakeWaiters = [];
    for (const resolve of waiters) resolve();
    look();
  }

  function nextWake(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      wakeWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  return {
    wake,
    wakeAt,
    nextWake,
    clear: () => {
      cleared = true;
      clearTimeout(dueTimer);
      wakeTimes.length = 0;
    },
  };
}
