import 'server-only';

import type { BackgroundJob } from '@/server/background/slices';

import { stopImportJobs } from './apply';
import { startImportSweep } from './sweep';

/** Where a failed apply is told (it stays "applying" until its claim lapses, then reads "interrupted"). */
let applyFailed: (error: unknown) => void = () => {};

export const reportApplyError = (error: unknown): void => applyFailed(error);

/**
 * The imports' background work in this process: the sweep of imports gone, and the applies that requests
 * start. Stopping it (a shutdown) ends each apply after its slice and lets go of its import at once.
 */
export function startImportWork(options: { onError: (error: unknown) => void }): BackgroundJob {
  applyFailed = options.onError;
  const sweep = startImportSweep({ onError: options.onError });
  return {
    async stop() {
      await Promise.all([sweep.stop(), stopImportJobs()]);
    },
  };
}
