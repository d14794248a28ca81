import { defineConfig } from 'vitest/config';

import { unitProject } from './vitest.config';

// `npm run test:mutation` (stryker.config.mjs): Stryker's Vitest runner takes one config, so this is the unit
// project alone, never the API suite (whose global setup builds and starts servers). Its tests run instrumented
// and two at a time: the timeout is a bound against a hang, not an expectation of speed.
export default defineConfig({ ...unitProject, test: { ...unitProject.test, testTimeout: 60_000, hookTimeout: 60_000 } });
